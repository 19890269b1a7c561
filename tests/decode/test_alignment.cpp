// Pieces → words, hard alignments from attention and the attention SVG, on hand-made attention.
#include <catch2/catch.hpp>

#include <cmath>

#include "decode/alignment.hpp"
#include "decode/attention_svg.hpp"
#include "util/utf8.hpp"

using namespace heed;

namespace {

// A tokenizer whose pieces are known: whole words of these lines are merged.
const Tokenizer& word_tokenizer() {
  static const Tokenizer t = [] {
    std::unordered_map<std::string, int64_t> counts = {{" the", 50}, {" cat", 40}, {" sat", 30}, {" on", 20}};
    TokenizerOptions opts;
    opts.vocab_size = 400;
    opts.character_coverage = 1.0;
    return Tokenizer::train_from_word_counts(counts, opts);
  }();
  return t;
}

std::vector<int32_t> encode(const std::string& text) {
  auto ids = word_tokenizer().encode(text);
  return {ids.begin(), ids.end()};
}

}  // namespace

TEST_CASE("pieces map to words: a word starts at a piece with a space; a lone space is no word", "[alignment]") {
  const Tokenizer& tok = word_tokenizer();
  // Two spaces give a lone "▁"; x and q are outside the alphabet: "▁" + two byte tokens.
  const auto ids = encode("the cat  sat xq ");
  std::vector<std::string> pieces;
  for (int32_t id : ids) pieces.push_back(tok.piece(id));
  const std::string space = "\xE2\x96\x81";
  REQUIRE(pieces == std::vector<std::string>{space + "the", space + "cat", space, space + "sat", space, "<0x78>",
                                             "<0x71>", space});
  CHECK(piece_words(tok, ids) == std::vector<int>{0, 1, -1, 2, 3, 3, 3, -1});
  CHECK(word_texts(tok, ids) == std::vector<std::string>{"the", "cat", "sat", "xq"});
}

TEST_CASE("hard alignment links each target word piece to its most attended source word", "[alignment]") {
  const Tokenizer& tok = word_tokenizer();
  const auto source = encode("the cat sat");  // 3 pieces + </s>
  const auto target = encode("sat xq");       // ▁sat | ▁ x q + </s>
  REQUIRE(target.size() == 4);
  const std::vector<std::vector<float>> attention = {
      {0.1f, 0.1f, 0.7f, 0.1f},  // ▁sat → sat
      {0.1f, 0.8f, 0.f, 0.1f},   // ▁ (part of xq) → cat
      {0.5f, 0.3f, 0.1f, 0.1f},  // x → the
      {0.1f, 0.2f, 0.1f, 0.6f},  // q → cat: the source </s> is excluded
      {0.9f, 0.f, 0.f, 0.1f},    // </s> row: ignored
  };
  const auto pairs = hard_alignment(tok, source, tok, target, attention);
  CHECK(pairs == std::vector<std::pair<int, int>>{{0, 1}, {1, 1}, {2, 0}});
  CHECK(format_alignment(pairs) == "0-1 1-1 2-0");
  CHECK(format_alignment({}) == "");
  CHECK(hard_alignment(tok, {}, tok, target, attention).empty());
}

TEST_CASE("word attention sums over source pieces and averages over target pieces", "[attention-svg]") {
  const Tokenizer& tok = word_tokenizer();
  const auto source = encode("cat xq  ");  // ▁cat | ▁ x q | ▁ ▁ (no word) → words cat, xq
  const auto target = encode("xq the");    // ▁ x q | ▁the → words xq, the
  REQUIRE(source.size() == 6);
  const std::vector<std::vector<float>> attention = {
      {0.4f, 0.2f, 0.f, 0.f, 0.f, 0.f, 0.4f},  // ▁
      {0.2f, 0.f, 0.4f, 0.4f, 0.f, 0.f, 0.f},  // x
      {0.6f, 0.f, 0.2f, 0.f, 0.f, 0.f, 0.2f},  // q
      {0.7f, 0.f, 0.f, 0.f, 0.1f, 0.2f, 0.f},  // ▁the
      {0.f, 0.5f, 0.f, 0.f, 0.f, 0.f, 0.5f},   // </s>
  };
  const AttentionMap map = word_attention(tok, source, tok, target, attention);
  CHECK(map.source_labels == std::vector<std::string>{"cat", "xq", "</s>"});
  CHECK(map.target_labels == std::vector<std::string>{"xq", "the", "</s>"});
  REQUIRE(map.weights.size() == 3);
  CHECK(map.weights[0][0] == Approx(0.4f));                     // (0.4 + 0.2 + 0.6) / 3
  CHECK(map.weights[0][1] == Approx(0.4f));                     // (0.2 + 0.8 + 0.2) / 3
  CHECK(map.weights[0][2] == Approx(0.2f));                     // (0.4 + 0 + 0.2) / 3
  CHECK(map.weights[1] == std::vector<float>{0.7f, 0.f, 0.f});  // the trailing spaces count for nothing
  CHECK(map.weights[2] == std::vector<float>{0.f, 0.5f, 0.5f});

  const std::string svg = attention_svg(map);
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(svg.find("</svg>") != std::string::npos);
  size_t cells = 0;
  for (size_t p = svg.find("<rect x="); p != std::string::npos; p = svg.find("<rect x=", p + 1)) ++cells;
  CHECK(cells == 9);
  CHECK(svg.find("&lt;/s&gt;") != std::string::npos);  // labels are escaped
  CHECK(svg.find("fill-opacity=\"0.400\"") != std::string::npos);
}

TEST_CASE("the attention SVG stays valid XML: control characters and invalid bytes become \\xNN, nan a blank cell",
          "[attention-svg]") {
  AttentionMap map;
  map.source_labels = {std::string("a\0b", 3), "c\x01", "</s>"};
  map.target_labels = {"\xFF\xFEx", "</s>"};
  map.weights = {{std::nanf(""), 0.5f, 0.5f}, {0.f, 0.f, 1.f}};
  const std::string svg = attention_svg(map);
  CHECK(svg.find("a\\x00b") != std::string::npos);
  CHECK(svg.find("c\\x01") != std::string::npos);
  CHECK(svg.find("\\xFF\\xFEx") != std::string::npos);
  CHECK(find_invalid_utf8(svg) == std::string::npos);
  size_t controls = 0;
  for (char c : svg) controls += static_cast<unsigned char>(c) < 0x20 && c != '\n';
  CHECK(controls == 0);
  CHECK(svg.find("fill-opacity=\"nan\"") == std::string::npos);
  CHECK(svg.find("fill-opacity=\"0.000\"") != std::string::npos);
}
