#pragma once
// The pieces of Python's string semantics sacreBLEU's results depend on, for UTF-8 text:
// str.isspace / split / strip / rstrip / lower and the general categories the intl tokenizer uses.
// Input must be valid UTF-8 (the CLI checks it); stray bytes are treated as single characters.
#include <string>
#include <string_view>
#include <vector>

#include "util/utf8.hpp"

namespace heed::metrics {

std::u32string to_code_points(std::string_view s);
std::string to_utf8(std::u32string_view s);

bool is_space(char32_t c);        // str.isspace()
bool is_punctuation(char32_t c);  // \p{P}
bool is_symbol(char32_t c);       // \p{S}
bool is_number(char32_t c);       // \p{N}

std::string python_lower(std::string_view s);  // str.lower(), final sigma included
std::string_view python_rstrip(std::string_view s);
std::string_view python_strip(std::string_view s);

// str.split(): tokens separated by runs of Unicode whitespace. Calls `emit(std::string_view)`.
template <typename Emit>
void for_each_token(std::string_view s, Emit&& emit) {
  size_t i = 0, n = s.size(), start = std::string_view::npos;
  while (i < n) {
    size_t at = i;
    unsigned char b = static_cast<unsigned char>(s[i]);
    bool space;
    if (b < 0x80) {
      space = b == ' ' || (b >= 0x09 && b <= 0x0D) || (b >= 0x1C && b <= 0x1F);
      ++i;
    } else {
      space = is_space(next_code_point(s, i));
    }
    if (space) {
      if (start != std::string_view::npos) emit(s.substr(start, at - start));
      start = std::string_view::npos;
    } else if (start == std::string_view::npos) {
      start = at;
    }
  }
  if (start != std::string_view::npos) emit(s.substr(start));
}

std::vector<std::string_view> split_whitespace(std::string_view s);
// ' '.join(s.split())
std::string collapse_whitespace(std::string_view s);

}  // namespace heed::metrics
