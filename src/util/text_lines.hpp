#pragma once
// Line-by-line text input with UTF-8 checking, for every command that reads text: errors name
// the file and the 1-based line. "-" or "" means standard input.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace heed {

// Byte offset of the first invalid UTF-8 sequence in `s`, or npos when `s` is valid UTF-8
// (overlongs, surrogates and code points above U+10FFFF are invalid).
size_t find_invalid_utf8(std::string_view s);
// Replace every invalid sequence by U+FFFD; returns how many were replaced.
size_t replace_invalid_utf8(std::string& s);
// `s` safe to show on a terminal: valid UTF-8 is kept, every byte of an invalid sequence and
// every control character (tab included, to keep a message on one line) becomes "\xNN".
std::string printable(std::string_view s);

class LineReader {
 public:
  explicit LineReader(const std::string& path);  // throws heed::Error naming the path
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // Next line without its '\n' (a '\r' before it is kept). False at end of input.
  bool next(std::string& line);
  // Like next(), but throws heed::Error "FILE:LINE: invalid UTF-8 ..." for an invalid line.
  bool next_utf8(std::string& line);
  size_t line_number() const { return line_no_; }
  const std::string& name() const { return name_; }

 private:
  std::FILE* file_ = nullptr;
  bool owned_ = false;
  std::string name_;
  size_t line_no_ = 0;
  char* buf_ = nullptr;
  size_t cap_ = 0;
};

// All lines of a file, UTF-8 checked.
std::vector<std::string> read_lines_utf8(const std::string& path);
// Number of lines (a final line without '\n' counts).
size_t count_lines(const std::string& path);

}  // namespace heed
