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
  // Like next_utf8(), and a NUL byte is an error too ("FILE:LINE: a NUL byte ..."): for the text
  // models learn from, where a NUL means a UTF-16 file far more often than a character. (Text to
  // translate keeps it: the tokenizer writes it as a byte token.)
  bool next_text(std::string& line);
  size_t line_number() const { return line_no_; }
  const std::string& name() const { return name_; }

 private:
  bool check_utf8(const std::string& line) const;  // true, or throws naming the line

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
// The same, with next_text()'s NUL check (and only that), for comparing the line counts of a file
// pair before anything else is read: a UTF-16 file counts one line more (a NUL follows its last
// '\n'), and its NULs say why.
size_t count_text_lines(const std::string& path);

// What the models read of a line: the line without the white space at its ends (the '\r' of a
// CRLF file included). Training pairs, the tokenizer's training text, and the text translated,
// scored and served all go through it, so that a CRLF file reads as its LF twin everywhere.
std::string_view trim_space(std::string_view line);

}  // namespace heed
