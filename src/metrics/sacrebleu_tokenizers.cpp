#include "metrics/sacrebleu_tokenizers.hpp"

#include "metrics/unicode.hpp"
#include "metrics/unicode_tables.hpp"
#include "util/error.hpp"

namespace heed::metrics {

namespace {

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  size_t pos = 0;
  while ((pos = s.find(from, pos)) != std::string::npos) {
    s.replace(pos, from.size(), to);
    pos += to.size();
  }
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_period_or_comma(char c) { return c == '.' || c == ','; }

// [\{-\~\[-\` -\&\(-\+\:-\@\/]: ASCII punctuation except ' , - . (and no letters or digits).
bool is_13a_split_char(char c) {
  return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') || (c >= '(' && c <= '+') ||
         (c >= ':' && c <= '@') || c == '/';
}

// re.sub of a two-character pattern `(A)(B)`: non-overlapping matches scanned left to right.
// Operating on bytes is exact here because B is always ASCII and continuation bytes never are.
template <typename First, typename Second>
std::string substitute_pair(const std::string& s, First first, Second second, bool space_before_first,
                            bool space_after_second) {
  std::string out;
  out.reserve(s.size() + s.size() / 4);
  size_t n = s.size();
  for (size_t i = 0; i < n;) {
    if (i + 1 < n && first(s[i]) && second(s[i + 1])) {
      if (space_before_first) out.push_back(' ');
      out.push_back(s[i]);
      out.push_back(' ');
      out.push_back(s[i + 1]);
      if (space_after_second) out.push_back(' ');
      i += 2;
    } else {
      out.push_back(s[i++]);
    }
  }
  return out;
}

// sacreBLEU's TokenizerRegexp, shared by 13a and zh.
std::string tokenize_regexp(const std::string& line) {
  std::string s;
  s.reserve(line.size() + line.size() / 2);
  for (char c : line) {
    if (is_13a_split_char(c)) {
      s.push_back(' ');
      s.push_back(c);
      s.push_back(' ');
    } else {
      s.push_back(c);
    }
  }
  auto not_digit = [](char c) { return !is_digit(c); };
  // The remaining rules can only match where their punctuation occurs (skipping them is exact).
  if (s.find_first_of(".,") != std::string::npos) {
    // ([^0-9])([\.,]) -> '\1 \2 '
    s = substitute_pair(s, not_digit, is_period_or_comma, false, true);
    // ([\.,])([^0-9]) -> ' \1 \2'
    s = substitute_pair(s, is_period_or_comma, not_digit, true, false);
  }
  if (s.find('-') != std::string::npos) {
    // ([0-9])(-) -> '\1 \2 '
    s = substitute_pair(
        s, is_digit, [](char c) { return c == '-'; }, false, true);
  }
  return collapse_whitespace(s);
}

// re.sub over code points with a two-character pattern (the intl tokenizer's rules).
template <typename First, typename Second>
std::u32string substitute_pair_cp(const std::u32string& s, First first, Second second, bool space_before_first,
                                  bool space_after_second) {
  std::u32string out;
  out.reserve(s.size() + s.size() / 4);
  size_t n = s.size();
  for (size_t i = 0; i < n;) {
    if (i + 1 < n && first(s[i]) && second(s[i + 1])) {
      if (space_before_first) out.push_back(U' ');
      out.push_back(s[i]);
      out.push_back(U' ');
      out.push_back(s[i + 1]);
      if (space_after_second) out.push_back(U' ');
      i += 2;
    } else {
      out.push_back(s[i++]);
    }
  }
  return out;
}

}  // namespace

BleuTokenizer parse_bleu_tokenizer(std::string_view name) {
  if (name == "13a") return BleuTokenizer::k13a;
  if (name == "intl") return BleuTokenizer::intl;
  if (name == "zh") return BleuTokenizer::zh;
  if (name == "char") return BleuTokenizer::character;
  if (name == "none") return BleuTokenizer::none;
  throw UsageError("unknown BLEU tokenizer '" + std::string(name) + "' (expected 13a, intl, zh, char or none)");
}

std::string_view tokenizer_name(BleuTokenizer tokenizer) {
  switch (tokenizer) {
    case BleuTokenizer::k13a: return "13a";
    case BleuTokenizer::intl: return "intl";
    case BleuTokenizer::zh: return "zh";
    case BleuTokenizer::character: return "char";
    case BleuTokenizer::none: return "none";
  }
  return "?";
}

std::string tokenize(BleuTokenizer tokenizer, std::string_view line) {
  switch (tokenizer) {
    case BleuTokenizer::k13a: return tokenize_13a(line);
    case BleuTokenizer::intl: return tokenize_intl(line);
    case BleuTokenizer::zh: return tokenize_zh(line);
    case BleuTokenizer::character: return tokenize_char(line);
    case BleuTokenizer::none: return std::string(line);
  }
  return std::string(line);
}

std::string tokenize_13a(std::string_view line) {
  std::string s(line);
  replace_all(s, "<skipped>", "");
  replace_all(s, "-\n", "");
  replace_all(s, "\n", " ");
  if (s.find('&') != std::string::npos) {
    replace_all(s, "&quot;", "\"");
    replace_all(s, "&amp;", "&");
    replace_all(s, "&lt;", "<");
    replace_all(s, "&gt;", ">");
  }
  return tokenize_regexp(" " + s + " ");
}

std::string tokenize_intl(std::string_view line) {
  std::u32string s = to_code_points(line);
  auto punct = [](char32_t c) { return is_punctuation(c); };
  auto not_number = [](char32_t c) { return !is_number(c); };
  s = substitute_pair_cp(s, not_number, punct, false, true);  // (\P{N})(\p{P}) -> '\1 \2 '
  s = substitute_pair_cp(s, punct, not_number, true, false);  // (\p{P})(\P{N}) -> ' \1 \2'
  std::u32string spaced;                                      // (\p{S}) -> ' \1 '
  spaced.reserve(s.size() + s.size() / 4);
  for (char32_t c : s) {
    if (is_symbol(c)) {
      spaced.push_back(U' ');
      spaced.push_back(c);
      spaced.push_back(U' ');
    } else {
      spaced.push_back(c);
    }
  }
  return collapse_whitespace(to_utf8(spaced));
}

// sacreBLEU's _UCODE_RANGES compared as Python strings. Two entries are written '\u20000' and
// '\u2f800' (meant as astral code points) but are two-character strings, so a single character c
// satisfies '\u2000'+'0' <= c <= '\u2a6d'+'6' exactly when U+2001 <= c <= U+2A6D, and likewise
// U+2F81..U+2FA1 for the second; the astral ranges themselves never match.
bool is_chinese_char(char32_t c) {
  static constexpr CodeRange kRanges[] = {
      {0x3400, 0x4DB5}, {0x4E00, 0x9FA5}, {0x9FA6, 0x9FBB}, {0xF900, 0xFA2D}, {0xFA30, 0xFA6A}, {0xFA70, 0xFAD9},
      {0x2001, 0x2A6D}, {0x2F81, 0x2FA1}, {0xFF00, 0xFFEF}, {0x2E80, 0x2EFF}, {0x3000, 0x303F}, {0x31C0, 0x31EF},
      {0x2F00, 0x2FDF}, {0x2FF0, 0x2FFF}, {0x3100, 0x312F}, {0x31A0, 0x31BF}, {0xFE10, 0xFE1F}, {0xFE30, 0xFE4F},
      {0x2600, 0x26FF}, {0x2700, 0x27BF}, {0x3200, 0x32FF}, {0x3300, 0x33FF},
  };
  for (const auto& r : kRanges)
    if (c >= r.first && c <= r.last) return true;
  return false;
}

std::string tokenize_zh(std::string_view line) {
  std::string_view stripped = python_strip(line);
  std::string spaced;
  spaced.reserve(stripped.size() * 2);
  for (size_t i = 0; i < stripped.size();) {
    char32_t c = next_code_point(stripped, i);
    if (is_chinese_char(c)) {
      spaced.push_back(' ');
      append_utf8(spaced, c);
      spaced.push_back(' ');
    } else {
      append_utf8(spaced, c);
    }
  }
  return tokenize_regexp(spaced);
}

std::string tokenize_char(std::string_view line) {
  std::string out;
  out.reserve(line.size() * 2);
  for (size_t i = 0; i < line.size();) {
    size_t at = i;
    char32_t c = next_code_point(line, i);
    if (is_space(c)) continue;
    if (!out.empty()) out.push_back(' ');
    out.append(line.substr(at, i - at));
  }
  return out;
}

}  // namespace heed::metrics
