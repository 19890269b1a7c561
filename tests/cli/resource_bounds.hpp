#pragma once
// Bounds for the tests that check a command's cost. `ulimit -v` bounds address space, which
// AddressSanitizer reserves by the terabyte for its shadow, so a sanitized build bounds resident
// memory instead (ASan's hard_rss_limit_mb, which kills the process past it); and it runs
// several times slower, so its time bounds are wider.
#include <string>

namespace heed::test {

#if defined(__SANITIZE_ADDRESS__)
// A shell prefix that bounds the memory of the command after it.
inline std::string memory_bound(int megabytes) {
  return "ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=" + std::to_string(megabytes) + "\" ";
}
inline double time_bound(double seconds) { return 5 * seconds; }
#else
inline std::string memory_bound(int megabytes) { return "ulimit -v " + std::to_string(megabytes * 1000) + " && "; }
inline double time_bound(double seconds) { return seconds; }
#endif

}  // namespace heed::test
