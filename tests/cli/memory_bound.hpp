#pragma once
// A shell prefix that bounds the memory of the command after it. `ulimit -v` bounds address
// space, which AddressSanitizer reserves by the terabyte for its shadow, so a sanitized build
// bounds resident memory instead (ASan's hard_rss_limit_mb, which kills the process past it).
#include <string>

namespace heed::test {

#if defined(__SANITIZE_ADDRESS__)
inline std::string memory_bound(int megabytes) {
  return "ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=" + std::to_string(megabytes) + "\" ";
}
#else
inline std::string memory_bound(int megabytes) {
  return "ulimit -v " + std::to_string(megabytes * 1000) + " && ";
}
#endif

}  // namespace heed::test
