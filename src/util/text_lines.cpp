#include "util/text_lines.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "util/error.hpp"
#include "util/utf8.hpp"

namespace heed {

namespace {

constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

void throw_if_nul(const LineReader& reader, const std::string& line) {
  const size_t nul = line.find('\0');
  if (nul != std::string::npos)
    throw Error(reader.name() + ":" + std::to_string(reader.line_number()) + ": a NUL byte at byte " +
                std::to_string(nul + 1) + " (is the file UTF-16? heed reads UTF-8)");
}

}  // namespace

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
  auto length = static_cast<size_t>(n);
  const bool newline = length > 0 && buf_[length - 1] == '\n';
  if (newline) --length;
  // A UTF-8 byte order mark (Windows editors write one) marks the file, it is not text of its
  // first line; elsewhere U+FEFF is a character like any other.
  size_t start = 0;
  if (line_no_ == 0 && std::string_view(buf_, length).starts_with(kUtf8Bom)) {
    start = kUtf8Bom.size();
    if (length == start && !newline) return false;  // nothing but the mark: a file without lines
  }
  ++line_no_;
  line.assign(buf_ + start, length - start);
  return true;
}

bool LineReader::next_utf8(std::string& line) { return next(line) && check_utf8(line); }

bool LineReader::check_utf8(const std::string& line) const {
  const size_t bad = find_invalid_utf8(line);
  if (bad != std::string::npos)
    throw Error(name_ + ":" + std::to_string(line_no_) + ": invalid UTF-8 at byte " + std::to_string(bad + 1));
  return true;
}

bool LineReader::next_text(std::string& line) {
  if (!next(line)) return false;
  throw_if_nul(*this, line);  // first: a UTF-16 file's mark (FF FE) is invalid UTF-8, its NULs say more
  return check_utf8(line);
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

size_t count_text_lines(const std::string& path) {
  LineReader reader(path);
  std::string line;
  size_t n = 0;
  for (; reader.next(line); ++n) throw_if_nul(reader, line);
  return n;
}

std::string_view trim_space(std::string_view line) {
  constexpr std::string_view kSpace = " \t\r\n\v\f";
  const size_t begin = line.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  return line.substr(begin, line.find_last_not_of(kSpace) - begin + 1);
}

}  // namespace heed
