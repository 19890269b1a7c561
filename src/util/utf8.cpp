#include "util/utf8.hpp"

#include <cstdio>

namespace heed {

size_t utf8_char_length(std::string_view s, size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  const size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 1;
  if (n == 1 || i + n > s.size()) return 1;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 1;
  return n;
}

size_t utf8_length(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); i += utf8_char_length(s, i)) ++n;
  return n;
}

char32_t next_code_point(std::string_view s, size_t& i) {
  const size_t len = utf8_char_length(s, i);
  const auto b = static_cast<unsigned char>(s[i]);
  char32_t c = len == 1 ? b : len == 2 ? (b & 0x1F) : len == 3 ? (b & 0x0F) : (b & 0x07);
  for (size_t k = 1; k < len; ++k) c = (c << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  i += len;
  return c;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

size_t find_invalid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t start = i, len = utf8_char_length(s, i);
    const bool stray = len == 1 && static_cast<unsigned char>(s[i]) >= 0x80;
    const char32_t cp = next_code_point(s, i);
    if (stray || (len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return start;
  }
  return std::string_view::npos;
}

size_t replace_invalid_utf8(std::string& s) {
  size_t count = 0, pos;
  std::string out;
  std::string_view rest(s);
  while ((pos = find_invalid_utf8(rest)) != std::string_view::npos) {
    out.append(rest.substr(0, pos));
    out.append("\xEF\xBF\xBD");
    ++count;
    // skip the lead byte and any continuation bytes that follow it
    size_t skip = 1;
    while (pos + skip < rest.size() && (static_cast<unsigned char>(rest[pos + skip]) & 0xC0) == 0x80 && skip < 4)
      ++skip;
    rest.remove_prefix(pos + skip);
  }
  if (count) {
    out.append(rest);
    s = std::move(out);
  }
  return count;
}

std::string printable(std::string_view s) {
  std::string out;
  auto escape = [&](unsigned char c) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02X", c);
    out += buf;
  };
  while (!s.empty()) {
    const size_t bad = find_invalid_utf8(s);
    for (char c : s.substr(0, bad)) {
      const auto u = static_cast<unsigned char>(c);
      if (u < 0x20 || u == 0x7F)
        escape(u);
      else
        out += c;
    }
    if (bad == std::string_view::npos) break;
    escape(static_cast<unsigned char>(s[bad]));  // one byte at a time: the rest may be valid
    s.remove_prefix(bad + 1);
  }
  return out;
}

}  // namespace heed
