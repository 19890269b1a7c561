#include "metrics/unicode.hpp"

#include <algorithm>

#include "metrics/unicode_tables.hpp"

namespace heed::metrics {

namespace {

bool in_ranges(const CodeRange* ranges, size_t size, char32_t c) {
  const CodeRange* end = ranges + size;
  const CodeRange* it = std::upper_bound(ranges, end, c, [](char32_t v, const CodeRange& r) { return v < r.first; });
  return it != ranges && c <= (it - 1)->last;
}

constexpr char32_t kCapitalSigma = 0x3A3, kSmallSigma = 0x3C3, kFinalSigma = 0x3C2;

bool is_cased(char32_t c) { return in_ranges(tables::cased, tables::cased_size, c); }
bool is_case_ignorable(char32_t c) { return in_ranges(tables::case_ignorable, tables::case_ignorable_size, c); }

// CPython's handle_capital_sigma: final form when preceded by a cased character and not followed
// by one, skipping case-ignorable characters on both sides.
bool is_final_sigma(const std::u32string& s, size_t i) {
  size_t j = i;
  while (j > 0 && is_case_ignorable(s[j - 1])) --j;
  if (j == 0 || !is_cased(s[j - 1])) return false;
  size_t k = i + 1;
  while (k < s.size() && is_case_ignorable(s[k])) ++k;
  return k == s.size() || !is_cased(s[k]);
}

}  // namespace

std::u32string to_code_points(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) out.push_back(next_code_point(s, i));
  return out;
}

std::string to_utf8(std::u32string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : s) append_utf8(out, c);
  return out;
}

bool is_space(char32_t c) { return in_ranges(tables::space, tables::space_size, c); }
bool is_punctuation(char32_t c) { return in_ranges(tables::punctuation, tables::punctuation_size, c); }
bool is_symbol(char32_t c) { return in_ranges(tables::symbol, tables::symbol_size, c); }
bool is_number(char32_t c) { return in_ranges(tables::number, tables::number_size, c); }

std::string python_lower(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool ascii = true;
  for (char ch : s) {
    if (static_cast<unsigned char>(ch) >= 0x80) {
      ascii = false;
      break;
    }
    out.push_back(ch >= 'A' && ch <= 'Z' ? static_cast<char>(ch + 32) : ch);
  }
  if (ascii) return out;
  out.clear();
  std::u32string cps = to_code_points(s);
  const LowerMapping* begin = tables::lower;
  const LowerMapping* end = tables::lower + tables::lower_size;
  for (size_t k = 0; k < cps.size(); ++k) {
    char32_t c = cps[k];
    if (c == kCapitalSigma) {
      append_utf8(out, is_final_sigma(cps, k) ? kFinalSigma : kSmallSigma);
      continue;
    }
    auto it = std::lower_bound(begin, end, c, [](const LowerMapping& m, char32_t v) { return m.from < v; });
    if (it != end && it->from == c) {
      append_utf8(out, it->to[0]);
      if (it->to[1]) append_utf8(out, it->to[1]);
    } else {
      append_utf8(out, c);
    }
  }
  return out;
}

std::string_view python_rstrip(std::string_view s) {
  size_t end = s.size();
  while (end > 0) {
    size_t start = end - 1;  // find the start of the last character
    while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80 && end - start < 4) --start;
    size_t i = start;
    if (!is_space(next_code_point(s, i))) break;
    end = start;
  }
  return s.substr(0, end);
}

std::string_view python_strip(std::string_view s) {
  s = python_rstrip(s);
  size_t i = 0;
  while (i < s.size()) {
    size_t at = i;
    if (!is_space(next_code_point(s, i))) {
      i = at;
      break;
    }
  }
  return s.substr(i);
}

std::vector<std::string_view> split_whitespace(std::string_view s) {
  std::vector<std::string_view> tokens;
  for_each_token(s, [&](std::string_view t) { tokens.push_back(t); });
  return tokens;
}

std::string collapse_whitespace(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for_each_token(s, [&](std::string_view t) {
    if (!out.empty()) out.push_back(' ');
    out.append(t);
  });
  return out;
}

}  // namespace heed::metrics
