#pragma once
// 64-bit FNV-1a: a hash that is the same on every platform and compiler (cache file names,
// comparing data-parallel ranks' parameters). Not for security.
#include <cstdint>
#include <string>
#include <string_view>

namespace heed {

struct Fnv1a {
  uint64_t h = 0xcbf29ce484222325ull;
  void add(std::string_view bytes) {
    for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ull;
  }
  void add_field(std::string_view text) {  // length-prefixed: fields cannot run into each other
    add(std::to_string(text.size()) + ":");
    add(text);
  }
};

}  // namespace heed
