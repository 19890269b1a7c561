// translate_lines on a real (random-weight, tiny) GRU model: batching does not change results,
// line count and order are kept, empty lines stay empty, long lines are truncated, and two
// threads (whole batches each) give the one-thread results.
#include <omp.h>

#include <catch2/catch.hpp>

#include "../fixtures/tiny_models.hpp"
#include "decode/translator.hpp"
#include "models/factory.hpp"
#include "util/text_lines.hpp"
#include "util/threads.hpp"

using namespace heed;

namespace {

const Tokenizers& sample_tokenizers() {
  static const Tokenizers t = [] {
    TokenizerOptions opts;
    opts.vocab_size = 400;
    return Tokenizers::joint(Tokenizer::train(
        {std::string(HEED_TEST_FIXTURES) + "/text/sample.en", std::string(HEED_TEST_FIXTURES) + "/text/sample.de"},
        opts));
  }();
  return t;
}

std::unique_ptr<Seq2Seq> tiny_gru() {
  const ModelConfig c = test::tiny_model_config(Arch::gru_bahdanau);
  const int v = sample_tokenizers().source().vocab_size();
  return make_model(c, v, v, 7);
}

std::vector<std::string> sample_lines(size_t n) {
  auto all = read_lines_utf8(std::string(HEED_TEST_FIXTURES) + "/text/sample.en");
  all.resize(n);
  return all;
}

DecodingConfig short_search(int beam, int batch_size = 32, int batch_tokens = 0) {
  DecodingConfig s;
  s.beam = beam;
  s.batch_size = batch_size;
  s.batch_tokens = batch_tokens;
  s.nbest = beam;
  s.max_length_ratio = 0.5f;  // random weights rarely choose </s>: keep outputs short
  s.max_length_offset = 2;
  return s;
}

void check_same(const std::vector<TranslationResult>& a, const std::vector<TranslationResult>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    REQUIRE(a[i].nbest.size() == b[i].nbest.size());
    for (size_t k = 0; k < a[i].nbest.size(); ++k) {
      INFO("line " << i << ", hypothesis " << k);
      CHECK(a[i].nbest[k].text == b[i].nbest[k].text);
      CHECK(a[i].nbest[k].tokens == b[i].nbest[k].tokens);
      CHECK(a[i].nbest[k].score == Approx(b[i].nbest[k].score).margin(1e-5));
    }
  }
}

}  // namespace

TEST_CASE("translating line by line and in batches gives identical output", "[translator]") {
  auto model = tiny_gru();
  const auto lines = sample_lines(24);
  const auto expected = translate_lines(*model, sample_tokenizers(), lines, short_search(3, 1), 0);
  check_same(translate_lines(*model, sample_tokenizers(), lines, short_search(3, 10), 0), expected);
  check_same(translate_lines(*model, sample_tokenizers(), lines, short_search(3, 32, 150), 0), expected);
  for (const auto& r : expected) {
    REQUIRE(r.nbest.size() == 3);
    CHECK_FALSE(r.nbest[0].tokens.empty());
    CHECK(r.nbest[0].tokens != r.nbest[1].tokens);
    CHECK(r.nbest[1].tokens != r.nbest[2].tokens);
    CHECK(r.nbest[0].tokens != r.nbest[2].tokens);
    CHECK(r.nbest[0].score >= r.nbest[1].score);
    CHECK(r.nbest[1].score >= r.nbest[2].score);
  }
}

TEST_CASE("line count and order are kept; empty lines give empty translations", "[translator]") {
  auto model = tiny_gru();
  auto lines = sample_lines(6);
  lines.insert(lines.begin() + 2, "");
  lines.insert(lines.begin(), "");
  lines.push_back("");
  const auto results = translate_lines(*model, sample_tokenizers(), lines, short_search(2, 4), 0);
  REQUIRE(results.size() == lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    INFO("line " << i);
    if (lines[i].empty()) {
      REQUIRE(results[i].nbest.size() == 1);
      CHECK(results[i].nbest[0].text.empty());
      CHECK(results[i].nbest[0].score == 0);
      continue;
    }
    const auto alone = translate_lines(*model, sample_tokenizers(), {lines[i]}, short_search(2, 4), 0);
    CHECK(results[i].nbest[0].text == alone[0].nbest[0].text);
    CHECK(results[i].source_tokens.size() == sample_tokenizers().source().encode(lines[i]).size());
  }
}

TEST_CASE("a line reads as training read it: CRLF and white space at the ends make no difference", "[translator]") {
  auto model = tiny_gru();
  const auto plain = sample_lines(4);
  std::vector<std::string> padded;
  for (const std::string& line : plain) padded.push_back("  \t" + line + " \r");
  padded.push_back(" \r");  // white space alone: an empty line
  const auto expected = translate_lines(*model, sample_tokenizers(), plain, short_search(2, 4), 0);
  const auto got = translate_lines(*model, sample_tokenizers(), padded, short_search(2, 4), 0);
  REQUIRE(got.size() == plain.size() + 1);
  for (size_t i = 0; i < plain.size(); ++i) {
    INFO("line " << i);
    CHECK(got[i].source_tokens == expected[i].source_tokens);
    CHECK(got[i].nbest[0].tokens == expected[i].nbest[0].tokens);
  }
  CHECK(got.back().source_tokens.empty());
  REQUIRE(got.back().nbest.size() == 1);
  CHECK(got.back().nbest[0].text.empty());
}

TEST_CASE("inputs longer than the limit are truncated and flagged", "[translator]") {
  auto model = tiny_gru();
  const std::vector<std::string> lines = {"a b", "this line has many more words than the limit allows"};
  const auto results = translate_lines(*model, sample_tokenizers(), lines, short_search(1), /*max_input_length=*/4);
  CHECK_FALSE(results[0].truncated);
  CHECK(results[0].source_tokens.size() == 2);
  CHECK(results[1].truncated);
  CHECK(results[1].source_tokens.size() == 4);
  CHECK(results[1].original_length == int(sample_tokenizers().source().encode(lines[1]).size()));
  // the output length limit follows the truncated source: ceil(0.5 · 4) + 2
  CHECK(results[1].nbest[0].tokens.size() <= 4);
}

TEST_CASE("translation keeps the model's training flag", "[translator]") {
  auto model = tiny_gru();
  model->set_training(true);
  translate_lines(*model, sample_tokenizers(), {"hello"}, short_search(1), 0);
  CHECK(model->training());
}

TEST_CASE("two threads take whole batches each and give the one-thread results", "[translator]") {
  const ModelConfig transformer = test::tiny_model_config(Arch::transformer);
  const int v = sample_tokenizers().source().vocab_size();
  std::vector<std::unique_ptr<Seq2Seq>> models;
  models.push_back(tiny_gru());
  models.push_back(make_model(transformer, v, v, 5));
  const auto lines = sample_lines(40);
  for (auto& model : models) {
    INFO(model->arch());
    model->set_training(true);  // the workers must all see evaluation mode (no dropout)
    for (int beam : {1, 3}) {
      set_num_threads(1);
      const auto alone = translate_lines(*model, sample_tokenizers(), lines, short_search(beam, 3), 0);  // many batches
      set_num_threads(2);
      const auto shared = translate_lines(*model, sample_tokenizers(), lines, short_search(beam, 3), 0);
      CHECK(omp_get_max_threads() == 2);  // the workers' one-thread setting ends with them (training goes on)
      set_num_threads(1);
      REQUIRE(shared.size() == alone.size());
      for (size_t i = 0; i < lines.size(); ++i) {
        INFO("line " << i << ", beam " << beam);
        REQUIRE(shared[i].nbest.size() == alone[i].nbest.size());
        for (size_t k = 0; k < alone[i].nbest.size(); ++k) {
          CHECK(shared[i].nbest[k].tokens == alone[i].nbest[k].tokens);
          CHECK(shared[i].nbest[k].score == alone[i].nbest[k].score);  // bit for bit
          CHECK(shared[i].nbest[k].attention == alone[i].nbest[k].attention);
        }
      }
    }
    CHECK(model->training());
  }
}
