// The one line reader: a UTF-8 byte order mark at the start of a file is not text.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "../temp_dir.hpp"
#include "util/error.hpp"
#include "util/text_lines.hpp"

using namespace heed;

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
