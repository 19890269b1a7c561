// decode(encode(x)) == x: on every line of real text and on many random Unicode strings.
#include <catch2/catch.hpp>

#include <random>

#include "text/word_counter.hpp"
#include "text/words.hpp"
#include "tokenizer_fixtures.hpp"

using heed::Tokenizer;

namespace {

void append_utf8(std::string& s, char32_t c) {
  if (c < 0x80) {
    s += static_cast<char>(c);
  } else if (c < 0x800) {
    s += static_cast<char>(0xC0 | (c >> 6));
    s += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    s += static_cast<char>(0xE0 | (c >> 12));
    s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (c >> 18));
    s += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (c & 0x3F));
  }
}

// Random strings mixing the hard cases: runs of spaces (leading, trailing, multiple), tabs,
// control characters, CJK, emoji, combining marks, RTL scripts, the literal U+2581 itself.
std::string random_text(std::mt19937& rng) {
  static const std::vector<std::pair<char32_t, char32_t>> ranges = {
      {' ', ' '},       {'a', 'z'},       {'A', 'Z'},       {'0', '9'},         {'!', '/'},
      {0x01, 0x1F},     {0x7F, 0x7F},     {0xA0, 0xFF},     {0x300, 0x36F},     {0x590, 0x5FF},
      {0x600, 0x6FF},   {0x4E00, 0x4FFF}, {0x3040, 0x30FF}, {0x1F600, 0x1F64F}, {0x1F900, 0x1F9FF},
      {0x2581, 0x2581}, {0x200B, 0x200F}, {0xFFFD, 0xFFFD}, {0xAC00, 0xACFF},   {0x10000, 0x1007F}};
  std::uniform_int_distribution<int> length(0, 40), pick(0, static_cast<int>(ranges.size()) - 1);
  std::string s;
  const int n = length(rng);
  for (int i = 0; i < n; ++i) {
    auto [lo, hi] = ranges[pick(rng) % 4 == 0 ? 0 : pick(rng)];  // spaces are frequent
    append_utf8(s, std::uniform_int_distribution<char32_t>(lo, hi)(rng));
  }
  return s;
}

}  // namespace

TEST_CASE("round trip on every line of the real-text sample", "[tokenizer]") {
  const Tokenizer& tok = heed::test::sample_tokenizer();
  const auto lines = heed::test::sample_lines();
  REQUIRE(lines.size() == 2008);
  size_t pieces = 0;
  for (const auto& line : lines) {
    const auto ids = tok.encode(line);
    REQUIRE(tok.decode(ids) == line);
    REQUIRE(tok.encode_uncached(line) == ids);  // the server's path: the same ids without the cache
    for (int id : ids) REQUIRE(id >= heed::kFirstByteId);  // never a special, never <unk>
    pieces += ids.size();
  }
  // The merges must actually compress: about 2.3 bytes a piece at this small vocabulary.
  size_t chars = 0;
  for (const auto& line : lines) chars += line.size();
  CHECK(pieces * 2 < chars);
}

TEST_CASE("round trip on random Unicode strings (property)", "[tokenizer]") {
  std::mt19937 rng(20261202);
  std::vector<std::string> texts;
  for (int i = 0; i < 3000; ++i) texts.push_back(random_text(rng));

  // A tokenizer whose alphabet holds the exotic characters too, so merges run across them.
  heed::WordCounts counts;
  for (size_t i = 0; i < 1000; ++i) {
    std::string line = texts[i];
    heed::for_each_word(line, [&](std::string_view w) { ++counts[std::string(w)]; });
  }
  heed::TokenizerOptions opts;
  opts.vocab_size = 2000;
  opts.character_coverage = 1.0;
  const Tokenizer exotic = Tokenizer::train_from_word_counts(counts, opts);

  for (const Tokenizer* tok : {&heed::test::sample_tokenizer(), &exotic}) {
    for (const auto& text : texts) {
      INFO("text: " << text);
      const auto ids = tok->encode(text);
      REQUIRE(tok->decode(ids) == text);
      for (int id : ids) REQUIRE(id >= heed::kFirstByteId);
      // Pieces shown as text map back to the same ids.
      const auto pieces = tok->encode_pieces(text);
      REQUIRE(pieces.size() == ids.size());
      for (size_t k = 0; k < ids.size(); ++k) REQUIRE(tok->piece_id(pieces[k]) == ids[k]);
    }
  }
}

TEST_CASE("whitespace, empty and very long lines", "[tokenizer]") {
  const Tokenizer& tok = heed::test::sample_tokenizer();
  CHECK(tok.encode("").empty());
  CHECK(tok.decode({}).empty());
  for (std::string text : {" ", "  ", " a", "a ", "a  b", "\t", " \t x\t ", "   leading", "trailing   "}) {
    INFO("text: [" << text << "]");
    CHECK(tok.decode(tok.encode(text)) == text);
  }
  // Each space is one U+2581 and the line gets one more in front.
  CHECK(tok.encode_pieces("  ") == std::vector<std::string>{"\xE2\x96\x81", "\xE2\x96\x81", "\xE2\x96\x81"});

  std::string long_word;  // 100k characters without a space: one word
  while (long_word.size() < 100000) long_word += "translation";
  std::string long_text;
  for (int i = 0; i < 20000; ++i) long_text += i % 7 == 0 ? "über " : "the ";
  long_text.resize(100000);
  for (const std::string* text : {&long_word, &long_text}) {
    const auto ids = tok.encode(*text);
    CHECK(tok.decode(ids) == *text);
    CHECK(ids.size() < text->size());
  }
}
