#include "util/text_lines.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "util/error.hpp"
#include "util/utf8.hpp"

namespace heed {

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
    throw Error(name_ + ":" + std::to_string(line_no_) + ": invalid UTF-8 at byte " + std::to_string(bad + 1));
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

std::string_view trim_space(std::string_view line) {
  constexpr std::string_view kSpace = " \t\r\n\v\f";
  const size_t begin = line.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  return line.substr(begin, line.find_last_not_of(kSpace) - begin + 1);
}

}  // namespace heed
