#pragma once
// Line-by-line text input with UTF-8 checking, for every command that reads text: errors name
// the file and the 1-based line. "-" or "" means standard input.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace heed {

class LineReader {
 public:
  explicit LineReader(const std::string& path);  // throws heed::Error naming the path
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // Next line without its '\n' (a '\r' before it is kept). False at end of input. A UTF-8 byte
  // order mark (EF BB BF) at the very start of the input is dropped; one anywhere else is kept.
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

// What the models read of a line: the line without the white space at its ends (the '\r' of a
// CRLF file included). Training pairs, the tokenizer's training text, and the text translated,
// scored and served all go through it, so that a CRLF file reads as its LF twin everywhere.
std::string_view trim_space(std::string_view line);

}  // namespace heed
