// BPE training: hand-checked merges on a tiny corpus, alphabet and coverage, byte fallback,
// determinism across thread counts, script classes and the piece-length cap.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>

#include <algorithm>

#include "text/script.hpp"
#include "text/space_symbol.hpp"
#include "text/tokenizer.hpp"
#include "text/word_counter.hpp"
#include "tokenizer_fixtures.hpp"
#include "util/atomic_file.hpp"
#include "util/threads.hpp"
#include "util/utf8.hpp"

using heed::Tokenizer;
using namespace std::string_literals;

namespace {

const std::string kSpace = "\xE2\x96\x81";  // U+2581

// The classic example: "low" x5, "lower" x2, "newest" x6, "widest" x3.
Tokenizer tiny(int vocab_size) {
  heed::TokenizerOptions opts;
  opts.vocab_size = vocab_size;
  opts.character_coverage = 1.0;
  return Tokenizer::train_from_word_counts({{" low", 5}, {" lower", 2}, {" newest", 6}, {" widest", 3}}, opts);
}

std::vector<std::string> merged_pieces(const Tokenizer& t) {
  std::vector<std::string> out;
  for (size_t r = 0; r < t.num_merges(); ++r)
    out.push_back(t.piece(t.merge(r).first) + "+" + t.piece(t.merge(r).second));
  return out;
}

}  // namespace

TEST_CASE("known corpus gives the hand-checked merges", "[tokenizer]") {
  const Tokenizer t = tiny(1000);
  // By hand: e+s and s+t both occur 9 times (newest, widest), the tie goes to ("e","s"); then
  // es+t (9); then the 7-fold ▁ l o w (ties broken by piece order, ▁ sorting first as a space);
  // then ▁ n e w + est (6); ▁ w i d + est (3); ▁low + e + r (2). No pair is left after that.
  const std::vector<std::string> expected = {
      "e+s",          "es+t",          kSpace + "+l",      kSpace + "l+o",     kSpace + "lo+w",
      kSpace + "+n",  kSpace + "n+e",  kSpace + "ne+w",    kSpace + "new+est", kSpace + "+w",
      kSpace + "w+i", kSpace + "wi+d", kSpace + "wid+est", kSpace + "low+e",   kSpace + "lowe+r"};
  CHECK(merged_pieces(t) == expected);
  // Alphabet: the space symbol first, then by frequency (e 17, w 16, s 9, t 9, ...), ties by bytes.
  CHECK(t.piece(260) == kSpace);
  CHECK(t.piece(261) == "e");
  CHECK(t.piece(262) == "w");
  CHECK(t.piece(263) == "s");
  CHECK(t.piece(264) == "t");
  CHECK(t.vocab_size() == 4 + 256 + 11 + 15);
  CHECK(t.encode_pieces("lowest newer") == std::vector<std::string>{kSpace + "low", "est", kSpace + "new", "e", "r"});
  CHECK(t.starts_word(t.piece_id(kSpace + "low")));
  CHECK_FALSE(t.starts_word(t.piece_id("est")));

  // The vocabulary size is a cap: 4 + 256 + 11 alphabet + 9 merges.
  CHECK(tiny(280).num_merges() == 9);
  CHECK(tiny(280).vocab_size() == 280);
  CHECK_THROWS_WITH(tiny(260), Catch::Contains("vocabulary size 260 is too small"));
}

TEST_CASE("special and byte tokens have fixed ids", "[tokenizer]") {
  const Tokenizer t = tiny(1000);
  CHECK(t.piece(heed::kPadId) == "<pad>");
  CHECK(t.piece(heed::kUnkId) == "<unk>");
  CHECK(t.piece(heed::kBosId) == "<s>");
  CHECK(t.piece(heed::kEosId) == "</s>");
  CHECK(t.piece(4) == "<0x00>");
  CHECK(t.piece(4 + 0xE2) == "<0xE2>");
  CHECK(t.piece(259) == "<0xFF>");
  CHECK(t.piece_id("no such piece") == heed::kUnkId);
  CHECK(t.decode({heed::kBosId, t.piece_id(kSpace + "low"), heed::kEosId, heed::kPadId}) == "low");
  CHECK_THROWS_WITH(t.decode({100000}), Catch::Contains("token id 100000 is outside the vocabulary"));
}

TEST_CASE("characters outside the alphabet fall back to bytes", "[tokenizer]") {
  const Tokenizer t = tiny(1000);
  // "€" is E2 82 AC; "q" is not in the alphabet either.
  CHECK(t.encode_pieces("low€q") == std::vector<std::string>{kSpace + "low", "<0xE2>", "<0x82>", "<0xAC>", "<0x71>"});
  CHECK(t.decode(t.encode("low€q")) == "low€q");
  // A literal U+2581 in the text is never the space symbol: it is always written as bytes.
  CHECK(t.encode_pieces("\xE2\x96\x81low") ==
        std::vector<std::string>{kSpace, "<0xE2>", "<0x96>", "<0x81>", "l", "o", "w"});
  CHECK(t.decode(t.encode("\xE2\x96\x81 low")) == "\xE2\x96\x81 low");
  // Stray byte tokens that do not form UTF-8 decode to U+FFFD.
  CHECK(t.decode({t.piece_id(kSpace + "low"), 4 + 0xE2}) == "low\xEF\xBF\xBD");
}

TEST_CASE("character_coverage leaves rare characters out of the alphabet", "[tokenizer]") {
  heed::TokenizerOptions opts;
  opts.vocab_size = 300;
  opts.character_coverage = 0.99;                          // of 1000 character occurrences: the single "z" is out
  heed::WordCounts counts = {{" aaaa", 180}, {" bz", 1}};  // 180 spaces + 720 a, 1 space + b + z
  // Total 903; a + space = 901 >= 0.99 * 903, so neither b nor z is kept.
  Tokenizer t = Tokenizer::train_from_word_counts(counts, opts);
  CHECK(t.piece_id("a") != heed::kUnkId);
  CHECK(t.piece_id("b") == heed::kUnkId);
  CHECK(t.piece_id("z") == heed::kUnkId);
  CHECK(t.encode_pieces("bz") == std::vector<std::string>{kSpace, "<0x62>", "<0x7A>"});
  opts.character_coverage = 1.0;
  t = Tokenizer::train_from_word_counts(counts, opts);
  CHECK(t.piece_id("z") != heed::kUnkId);
}

TEST_CASE("training is deterministic whatever the thread count", "[tokenizer]") {
  heed::TokenizerOptions opts;
  opts.vocab_size = 700;
  heed::set_num_threads(1);
  const std::string one = Tokenizer::train(heed::test::sample_files(), opts).to_json().dump();
  heed::set_num_threads(2);
  const std::string two = Tokenizer::train(heed::test::sample_files(), opts).to_json().dump();
  heed::set_num_threads(1);
  CHECK(one == two);
  CHECK(Tokenizer::train(heed::test::sample_files(), opts).to_json().dump() == one);
}

TEST_CASE("training on files without text is an error naming them, not a tokenizer of bytes alone", "[tokenizer]") {
  heed::write_file_atomic("tokenizer_training_blank.txt", "\n\n");
  CHECK_THROWS_WITH(Tokenizer::train({"/dev/null", "tokenizer_training_blank.txt"}, {}),
                    "no text to learn a tokenizer from in /dev/null, tokenizer_training_blank.txt");
  std::remove("tokenizer_training_blank.txt");
}

TEST_CASE("a CRLF file, or white space at the line ends, learns the tokenizer of the plain text", "[tokenizer]") {
  // Training pairs are read trimmed: a tokenizer learning "\r" or edge spaces would spend pieces
  // on text the model never sees.
  const std::string plain_path = heed::test::sample_files()[0], padded_path = "tokenizer_training_crlf.txt";
  std::string padded;
  for (const std::string& line : heed::read_lines_utf8(plain_path)) padded += "  " + line + " \t\r\n";
  heed::write_file_atomic(padded_path, padded);
  heed::TokenizerOptions opts;
  opts.vocab_size = 500;
  const Tokenizer plain = Tokenizer::train({plain_path}, opts), from_padded = Tokenizer::train({padded_path}, opts);
  CHECK(from_padded.to_json().dump() == plain.to_json().dump());
  CHECK(from_padded.piece_id("\r") == heed::kUnkId);  // "\r" is not a learned piece
  std::remove(padded_path.c_str());
}

TEST_CASE("invalid UTF-8 in training text names file and line", "[tokenizer]") {
  const std::string path = "tokenizer_training_invalid.txt";
  heed::write_file_atomic(path, "fine\nalso fine\nbad \xC3\x28 here\n");
  CHECK_THROWS_WITH(Tokenizer::train({path}, {}), Catch::Contains(path + ":3") && Catch::Contains("UTF-8"));
  std::remove(path.c_str());
}

TEST_CASE("a NUL byte in training text (a UTF-16 file) names file and line", "[tokenizer]") {
  const std::string path = "tokenizer_training_nul.txt";
  heed::write_file_atomic(path, "fine\nalso fine\nh\0i\0\n"s);
  CHECK_THROWS_WITH(Tokenizer::train({path}, {}),
                    path + ":3: a NUL byte at byte 2 (is the file UTF-16? heed reads UTF-8)");
  std::remove(path.c_str());
}

TEST_CASE("script classes: scripts apart, digits and punctuation common, marks join", "[tokenizer]") {
  using heed::script_of;
  CHECK(script_of(U'a') == script_of(U'Z'));
  CHECK(script_of(U'a') == script_of(U'\u00E9'));       // é
  CHECK(script_of(U'a') == script_of(U'\u1E9E'));       // ẞ
  CHECK(script_of(U'a') != script_of(U'\u03B1'));       // Greek alpha
  CHECK(script_of(U'\u03B1') != script_of(U'\u0436'));  // Cyrillic zhe
  CHECK(script_of(U'\u65E5') == script_of(U'\u3042'));  // Han and Hiragana: one class
  CHECK(script_of(U'\u65E5') == script_of(U'\u30C6'));  // and Katakana
  CHECK(script_of(U'7') == heed::kCommonScript);
  CHECK(script_of(U'.') == heed::kCommonScript);
  CHECK(script_of(U'\u20AC') == heed::kCommonScript);      // €
  CHECK(script_of(U'\U0001F600') == heed::kCommonScript);  // emoji
  CHECK(script_of(U'\u0301') == heed::kAnyScript);         // combining acute
  CHECK(script_of(U'\u0915') == script_of(U'\u0940'));     // Devanagari letter and vowel sign
  CHECK(script_of(U'\u0915') != script_of(U'\u0995'));     // Devanagari vs Bengali (block classes)
  CHECK(heed::script_of_piece(" file") == script_of(U'f'));
  CHECK(heed::script_of_piece("\xE2\x96\x81") == heed::kAnyScript);
  CHECK(heed::script_of_piece("e\xCC\x81") == script_of(U'e'));
}

TEST_CASE("learned pieces never mix scripts, or letters with digits and punctuation", "[tokenizer]") {
  heed::TokenizerOptions opts;
  opts.vocab_size = 1000;
  opts.character_coverage = 1.0;
  const heed::WordCounts counts = {{" file.", 50}, {" x86", 40}, {" 3.5", 30}, {" αβγ-abc", 20}};
  const Tokenizer split = Tokenizer::train_from_word_counts(counts, opts);
  CHECK(split.encode_pieces("file.") == std::vector<std::string>{kSpace + "file", "."});
  CHECK(split.encode_pieces("x86") == std::vector<std::string>{kSpace + "x", "86"});
  CHECK(split.encode_pieces("3.5") == std::vector<std::string>{kSpace + "3.5"});  // all common
  CHECK(split.encode_pieces("αβγ-abc") == std::vector<std::string>{kSpace + "αβγ", "-", "abc"});
  for (int id = 260; id < split.vocab_size(); ++id) {  // every character has the piece's class
    const std::string& piece = split.piece(id);
    INFO(piece);
    for (size_t i = 0; i < piece.size(); i += heed::utf8_char_length(piece, i))
      CHECK(heed::scripts_compatible(heed::script_of_piece(piece),
                                     heed::script_of_piece(piece.substr(i, heed::utf8_char_length(piece, i)))));
  }
  opts.split_by_script = false;
  const Tokenizer joined = Tokenizer::train_from_word_counts(counts, opts);
  CHECK(joined.encode_pieces("file.") == std::vector<std::string>{kSpace + "file."});
  CHECK(joined.encode_pieces("x86") == std::vector<std::string>{kSpace + "x86"});
  CHECK(joined.to_json()["settings"]["split_by_script"] == false);
  CHECK(split.to_json()["settings"]["split_by_script"] == true);
}

TEST_CASE("max_piece_length caps learned pieces, the word marker counted", "[tokenizer]") {
  heed::TokenizerOptions opts;
  opts.vocab_size = 1000;
  opts.max_piece_length = 4;
  const Tokenizer t = Tokenizer::train_from_word_counts({{" abcdefghij", 100}}, opts);
  size_t longest = 0;
  for (int id = 260; id < t.vocab_size(); ++id) longest = std::max(longest, heed::utf8_length(t.piece(id)));
  CHECK(longest == 4);
  CHECK(t.encode_pieces("abcdefghij").size() == 3);  // ▁abc defg hij, or another 4+4+3 split
  CHECK(t.decode(t.encode("abcdefghij")) == "abcdefghij");
  opts.max_piece_length = 1;
  CHECK_THROWS_WITH(Tokenizer::train_from_word_counts({{" ab", 1}}, opts), Catch::Contains("max piece length"));
}
