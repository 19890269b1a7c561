#pragma once
// Lookup tables of a loaded tokenizer (private to src/text): built once from vocab + merges,
// then shared read-only by all copies of the Tokenizer and all threads.
#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "text/tokenizer.hpp"

namespace heed {

struct Tokenizer::Model {
  struct Merge {
    int rank;
    int result;
  };
  std::vector<std::string> vocab;                // pieces as shown (U+2581 for spaces)
  std::vector<std::string> text;                 // what each id decodes to (specials: empty; bytes: the byte)
  std::vector<char> starts_word;                 // non-byte piece beginning with U+2581
  std::unordered_map<std::string, int> id_of;    // piece as shown -> id
  std::array<int, 128> ascii_char_id{};          // ASCII character -> id, -1 if not in alphabet
  std::unordered_map<std::string, int> char_id;  // other alphabet characters (UTF-8) -> id
  std::unordered_map<uint64_t, Merge> merges;    // (left << 32 | right) -> rank and result
  uint64_t instance = 0;                         // identifies this table for the per-thread word cache
};

// Throws heed::Error unless j is an object with the "format" and "version" this heed reads.
void check_format_and_version(const nlohmann::json& j, const std::string& origin);

}  // namespace heed
