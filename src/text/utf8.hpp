#pragma once
// Minimal UTF-8 stepping for the tokenizer: split text into characters without validating
// (validation happens once at input, in util/text_lines); a stray byte is its own "character".
#include <string>
#include <string_view>

namespace heed {

// Length in bytes of the character starting at s[i]: 1..4, or 1 for a byte that does not begin
// a complete well-formed sequence.
inline size_t utf8_char_length(std::string_view s, size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 1;
  if (n == 1 || i + n > s.size()) return 1;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 1;
  return n;
}

// Number of characters in s, counted as utf8_char_length steps.
inline size_t utf8_length(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); i += utf8_char_length(s, i)) ++n;
  return n;
}

// The visible whitespace symbol U+2581 that stands for a space inside pieces.
inline constexpr std::string_view kSpaceSymbol = "\xE2\x96\x81";

// Pieces are shown with U+2581 for spaces; these convert between the two forms.
std::string spaces_to_symbol(std::string_view text);
std::string symbol_to_spaces(std::string_view piece);

}  // namespace heed
