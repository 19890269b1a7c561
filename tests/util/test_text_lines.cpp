// The one line reader: a UTF-8 byte order mark at the start of a file is not text; the text models
// learn from refuses a NUL byte (a UTF-16 file), the text to translate keeps it.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "../temp_dir.hpp"
#include "util/error.hpp"
#include "util/text_lines.hpp"

using namespace heed;
using namespace std::string_literals;

namespace {

const std::string kBom = "\xEF\xBB\xBF";  // U+FEFF in UTF-8

std::string write(const test::TempDir& dir, const std::string& name, const std::string& bytes) {
  std::ofstream(dir / name, std::ios::binary) << bytes;
  return dir / name;
}

std::vector<std::string> lines_of(const std::string& path) {
  LineReader reader(path);
  std::vector<std::string> lines;
  for (std::string line; reader.next(line);) lines.push_back(line);
  return lines;
}

}  // namespace

TEST_CASE("a byte order mark at the start of a file reads as if it were not there", "[text_lines]") {
  test::TempDir dir("text-lines-bom");
  const std::string text = "Hallo Welt\r\nzweite Zeile\n";
  const std::string plain = write(dir, "plain.txt", text), marked = write(dir, "marked.txt", kBom + text);
  const std::vector<std::string> expected = {"Hallo Welt\r", "zweite Zeile"};
  CHECK(lines_of(plain) == expected);
  CHECK(lines_of(marked) == expected);
  CHECK(read_lines_utf8(marked) == expected);
  CHECK(count_lines(marked) == 2);

  // Line numbers and byte positions in errors count from the text, not the mark.
  const std::string bad = write(dir, "bad.txt", kBom + "x\xFF\n");
  CHECK_THROWS_WITH(read_lines_utf8(bad), bad + ":1: invalid UTF-8 at byte 2");

  // A file holding only the mark has no lines, like an empty one; with a newline, one empty line.
  CHECK(lines_of(write(dir, "only.txt", kBom)).empty());
  CHECK(count_lines(dir / "only.txt") == 0);
  CHECK(lines_of(write(dir, "only_newline.txt", kBom + "\n")) == std::vector<std::string>{""});
}

TEST_CASE("U+FEFF anywhere but the start of a file is kept", "[text_lines]") {
  test::TempDir dir("text-lines-feff");
  // within the first line, at the start of the second, and a second mark after the first
  const std::string path = write(dir, "inner.txt", "a" + kBom + "b\n" + kBom + "c\n");
  CHECK(lines_of(path) == std::vector<std::string>{"a" + kBom + "b", kBom + "c"});
  CHECK(lines_of(write(dir, "twice.txt", kBom + kBom + "d\n")) == std::vector<std::string>{kBom + "d"});
}

TEST_CASE("next_text refuses a NUL byte (a UTF-16 file); next_utf8 keeps it", "[text_lines]") {
  test::TempDir dir("text-lines-nul");
  const std::string nul = write(dir, "nul.txt", "fine\nbad\0byte\n"s);
  LineReader text(nul);
  std::string line;
  CHECK(text.next_text(line));
  CHECK_THROWS_WITH(text.next_text(line), nul + ":2: a NUL byte at byte 4 (is the file UTF-16? heed reads UTF-8)");
  LineReader utf8(nul);  // what translate reads with: the NUL stays (the tokenizer's byte token)
  CHECK(utf8.next_utf8(line));
  CHECK(utf8.next_utf8(line));
  CHECK(line == "bad\0byte"s);
  CHECK(count_lines(nul) == 2);
  CHECK_THROWS_WITH(count_text_lines(nul), nul + ":2: a NUL byte at byte 4 (is the file UTF-16? heed reads UTF-8)");

  // "hi\n" in UTF-16LE with its mark: the NUL, not the mark's invalid UTF-8, is what is reported.
  const std::string utf16 = write(dir, "utf16.txt", "\xFF\xFEh\0i\0\n\0"s);
  LineReader reader(utf16);
  CHECK_THROWS_WITH(reader.next_text(line), utf16 + ":1: a NUL byte at byte 4 (is the file UTF-16? heed reads UTF-8)");
  CHECK(count_text_lines(write(dir, "clean.txt", "a\nb")) == 2);
}
