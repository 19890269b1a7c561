#include "util/text_lines.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "util/error.hpp"

namespace heed {

size_t find_invalid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size(), i = 0;
  while (i < n) {
    unsigned c = p[i];
    if (c < 0x80) { ++i; continue; }
    size_t len;
    unsigned cp;
    if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; }
    else return i;
    if (i + len > n) return i;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return i;
    i += len;
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
    while (pos + skip < rest.size() && (static_cast<unsigned char>(rest[pos + skip]) & 0xC0) == 0x80 &&
           skip < 4)
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
      if (u < 0x20 || u == 0x7F) escape(u);
      else out += c;
    }
    if (bad == std::string_view::npos) break;
    escape(static_cast<unsigned char>(s[bad]));  // one byte at a time: the rest may be valid
    s.remove_prefix(bad + 1);
  }
  return out;
}

LineReader::LineReader(const std::string& path) {
  if (path.empty() || path == "-") {
    file_ = stdin;
    name_ = "<stdin>";
  } else {
    file_ = std::fopen(path.c_str(), "rb");
    if (!file_) throw Error("cannot read " + path + ": " + std::strerror(errno));
    owned_ = true;
    name_ = path;
  }
}

LineReader::~LineReader() {
  if (owned_) std::fclose(file_);
  std::free(buf_);
}

bool LineReader::next(std::string& line) {
  ssize_t n = getline(&buf_, &cap_, file_);
  if (n < 0) {
    if (std::ferror(file_)) throw Error("cannot read " + name_ + ": " + std::strerror(errno));
    return false;
  }
  ++line_no_;
  if (n > 0 && buf_[n - 1] == '\n') --n;
  line.assign(buf_, static_cast<size_t>(n));
  return true;
}

bool LineReader::next_utf8(std::string& line) {
  if (!next(line)) return false;
  size_t bad = find_invalid_utf8(line);
  if (bad != std::string::npos)
    throw Error(name_ + ":" + std::to_string(line_no_) + ": invalid UTF-8 at byte " +
                std::to_string(bad + 1));
  return true;
}

std::vector<std::string> read_lines_utf8(const std::string& path) {
  LineReader reader(path);
  std::vector<std::string> lines;
  std::string line;
  while (reader.next_utf8(line)) lines.push_back(line);
  return lines;
}

size_t count_lines(const std::string& path) {
  LineReader reader(path);
  std::string line;
  size_t n = 0;
  while (reader.next(line)) ++n;
  return n;
}

}  // namespace heed
