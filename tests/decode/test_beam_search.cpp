// Beam search against exhaustive enumeration and greedy decoding on a hand-made table model, plus
// the search rules: n-best lists, banned tokens, the length limit, early stopping, batching.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <set>

#include "../fixtures/tiny_models.hpp"
#include "decode/beam_search.hpp"
#include "models/factory.hpp"
#include "table_model.hpp"

using namespace heed;
using heed::test::TableModel;

namespace {

struct Scored {
  std::vector<int32_t> tokens;
  float log_prob, score;
};

float normalise(float log_prob, size_t tokens, float alpha) {
  return alpha == 0 ? log_prob : log_prob / std::pow(float(tokens + 1), alpha);
}

// Every hypothesis the search may produce: each allowed prefix of at most max_len tokens + </s>,
// log-probabilities summed in the search's order.
void enumerate(const TableModel& m, int32_t key, int max_len, float alpha, int vocab, std::vector<int32_t>& prefix,
               float sum, std::vector<Scored>& out) {
  const auto lp = m.log_probs(key, prefix);
  const float total = sum + lp[kEosId];
  out.push_back({prefix, total, normalise(total, prefix.size(), alpha)});
  if (int(prefix.size()) == max_len) return;
  for (int32_t v = 4; v < vocab; ++v) {
    prefix.push_back(v);
    enumerate(m, key, max_len, alpha, vocab, prefix, sum + lp[v], out);
    prefix.pop_back();
  }
}

std::vector<Scored> all_hypotheses_best_first(const TableModel& m, int32_t key, int max_len, float alpha, int vocab) {
  std::vector<Scored> out;
  std::vector<int32_t> prefix;
  enumerate(m, key, max_len, alpha, vocab, prefix, 0.f, out);
  std::stable_sort(out.begin(), out.end(), [](const Scored& a, const Scored& b) { return a.score > b.score; });
  return out;
}

Batch one_sentence(int32_t key, int source_tokens) {
  std::vector<int32_t> src(source_tokens, 5);
  src[0] = key;
  return make_batch({src}, {});
}

float path_log_prob(const TableModel& m, int32_t key, const std::vector<int32_t>& tokens) {
  std::vector<int32_t> prefix;
  float sum = 0;
  for (int32_t t : tokens) {
    sum += m.log_probs(key, prefix)[t];
    prefix.push_back(t);
  }
  return sum + m.log_probs(key, prefix)[kEosId];
}

}  // namespace

TEST_CASE("a beam as wide as the search space returns the exhaustive optimum", "[beam]") {
  const int vocab = 7;  // 4 specials + 3 words
  TableModel model(vocab, 11);
  DecodingConfig opt;
  opt.beam = 256;  // more than the 121 hypotheses of up to 4 words
  opt.max_length_ratio = 1;
  opt.max_length_offset = 2;  // 2 source tokens → at most 4 output tokens
  for (float alpha : {0.f, 0.6f, 1.f, 2.f}) {
    opt.length_penalty = alpha;
    for (int32_t key = 4; key < 16; ++key) {
      const auto expected = all_hypotheses_best_first(model, key, 4, alpha, vocab);
      REQUIRE(expected.size() == 121);
      const auto got = beam_search(model, one_sentence(key, 2), opt);
      REQUIRE(got.size() == 1);
      REQUIRE(got[0].size() == 1);
      INFO("alpha " << alpha << ", key " << key);
      CHECK(got[0][0].tokens == expected[0].tokens);
      CHECK(got[0][0].score == expected[0].score);
      CHECK(got[0][0].log_prob == expected[0].log_prob);
    }
  }
}

TEST_CASE("early stopping never drops a hypothesis that could still win under length normalisation", "[beam]") {
  // </s> first is likely, so a finished hypothesis is there at once; with alpha = 2 long outputs
  // gain so much from the normalisation that hypotheses that look worse now win later.
  const int vocab = 7;
  TableModel model(vocab, 21);
  model.set_first_step_bias(kEosId, 3.f);
  DecodingConfig opt;
  opt.beam = 4096;
  opt.max_length_ratio = 2;
  opt.max_length_offset = 2;  // 2 source tokens → at most 6 output tokens: 1093 hypotheses
  opt.length_penalty = 2.f;
  int later_winners = 0;  // keys whose best output is not the immediate </s>
  for (int32_t key = 4; key < 8; ++key) {
    const auto expected = all_hypotheses_best_first(model, key, 6, 2.f, vocab);
    REQUIRE(expected.size() == 1093);
    const auto got = beam_search(model, one_sentence(key, 2), opt)[0];
    CHECK(got[0].tokens == expected[0].tokens);
    CHECK(got[0].score == expected[0].score);
    later_winners += !got[0].tokens.empty();
  }
  CHECK(later_winners >= 2);
}

TEST_CASE("with a full-width beam the n-best list is the top of the enumeration", "[beam]") {
  const int vocab = 7;
  TableModel model(vocab, 5);
  DecodingConfig opt;
  opt.beam = 256;
  opt.nbest = 8;
  opt.max_length_ratio = 1;
  opt.max_length_offset = 2;
  opt.length_penalty = 1.f;
  for (int32_t key = 4; key < 10; ++key) {
    const auto expected = all_hypotheses_best_first(model, key, 4, 1.f, vocab);
    const auto got = beam_search(model, one_sentence(key, 2), opt)[0];
    REQUIRE(got.size() == 8);
    for (size_t i = 0; i < got.size(); ++i) {
      CHECK(got[i].tokens == expected[i].tokens);
      CHECK(got[i].score == expected[i].score);
    }
  }
}

TEST_CASE("beam 1 equals greedy argmax decoding", "[beam]") {
  const int vocab = 40;
  TableModel model(vocab, 3);
  model.set_bias(kEosId, -1.5f);  // longer outputs
  DecodingConfig opt;
  opt.beam = 1;
  opt.max_length_ratio = 2;
  opt.max_length_offset = 3;
  for (int32_t key = 4; key < 30; ++key) {
    const int max_len = max_output_length(4, opt);
    std::vector<int32_t> greedy;
    float log_prob = 0;
    for (;;) {
      const auto lp = model.log_probs(key, greedy);
      int32_t best = kEosId;
      if (int(greedy.size()) < max_len)
        for (int32_t v = 3; v < vocab; ++v)  // </s> and the words; <pad> <unk> <s> are banned
          if (lp[v] > lp[best]) best = v;
      log_prob += lp[best];
      if (best == kEosId) break;
      greedy.push_back(best);
    }
    const auto got = beam_search(model, one_sentence(key, 4), opt)[0];
    REQUIRE(got.size() == 1);
    CHECK(got[0].tokens == greedy);
    CHECK(got[0].log_prob == log_prob);
  }
}

TEST_CASE("n-best lists hold K distinct hypotheses sorted by score, scores matching the model", "[beam]") {
  const int vocab = 30;
  TableModel model(vocab, 8);
  model.set_bias(kEosId, -1.f);
  DecodingConfig opt;
  opt.beam = 6;
  opt.nbest = 6;
  opt.length_penalty = 0.8f;
  for (int32_t key = 4; key < 12; ++key) {
    const auto got = beam_search(model, one_sentence(key, 3), opt)[0];
    REQUIRE(got.size() == 6);
    std::set<std::vector<int32_t>> distinct;
    for (size_t i = 0; i < got.size(); ++i) {
      distinct.insert(got[i].tokens);
      if (i > 0) CHECK(got[i - 1].score >= got[i].score);
      CHECK(got[i].log_prob == Approx(path_log_prob(model, key, got[i].tokens)).margin(1e-4));
      CHECK(got[i].score == normalise(got[i].log_prob, got[i].tokens.size(), 0.8f));
    }
    CHECK(distinct.size() == 6);
  }
}

TEST_CASE("<pad> and <s> are never produced, <unk> only when allowed", "[beam]") {
  const int vocab = 12;
  TableModel model(vocab, 2);
  for (int32_t special : {0, 1, 2}) model.set_bias(special, 8.f);  // by far the likeliest tokens
  DecodingConfig opt;
  opt.beam = 3;
  opt.nbest = 3;
  auto count = [&](bool allow_unk, int32_t token) {
    opt.allow_unk = allow_unk;
    int n = 0;
    for (int32_t key = 4; key < 10; ++key) {
      const auto nbest = beam_search(model, one_sentence(key, 3), opt)[0];
      for (const auto& h : nbest) n += int(std::count(h.tokens.begin(), h.tokens.end(), token));
    }
    return n;
  };
  CHECK(count(false, 0) == 0);
  CHECK(count(false, 1) == 0);
  CHECK(count(false, 2) == 0);
  CHECK(count(true, 0) == 0);
  CHECK(count(true, 2) == 0);
  CHECK(count(true, kUnkId) > 0);
}

TEST_CASE("the length limit is ceil(ratio * source length) + offset, where </s> is forced", "[beam]") {
  DecodingConfig opt;
  opt.max_length_ratio = 1.5f;
  opt.max_length_offset = 2;
  CHECK(max_output_length(3, opt) == 7);  // ceil(4.5) + 2
  CHECK(max_output_length(4, opt) == 8);

  TableModel model(20, 4);
  model.set_bias(kEosId, -30.f);  // </s> never wins on its own
  opt.beam = 3;
  for (int source_tokens : {1, 3, 6}) {
    const auto got = beam_search(model, one_sentence(7, source_tokens), opt)[0];
    CHECK(int(got[0].tokens.size()) == max_output_length(source_tokens, opt));
  }
}

TEST_CASE("the length limit never passes the model's decoder positions", "[beam]") {
  DecodingConfig opt;
  opt.max_length_ratio = 3.f;
  opt.max_length_offset = 5;
  opt.beam = 3;
  TableModel model(20, 4);
  model.set_bias(kEosId, -30.f);
  model.set_max_positions(6);  // steps 0..5: five tokens, then </s>
  const auto capped = beam_search(model, one_sentence(7, 4), opt);
  REQUIRE_FALSE(capped[0].empty());
  for (const auto& hyp : capped[0]) CHECK(hyp.tokens.size() == 5);

  ModelConfig c = test::tiny_model_config(Arch::transformer);  // a real model that throws past its positions
  c.transformer.max_positions = 6;
  auto transformer = make_model(c, 29, 29, 1);
  std::vector<std::vector<Hypothesis>> got;
  REQUIRE_NOTHROW(got = beam_search(*transformer, make_batch({{5, 6, 7, 8}}, {}), opt));
  REQUIRE_FALSE(got[0].empty());
  for (const auto& hyp : got[0]) CHECK(hyp.tokens.size() <= 5);
}

TEST_CASE("search stops once no live hypothesis can beat the best finished one", "[beam]") {
  TableModel model(20, 6);
  model.set_bias(kEosId, 6.f);  // </s> first is far more likely than any word
  DecodingConfig opt;
  opt.beam = 4;
  opt.length_penalty = 0;  // live scores can only fall
  const auto got = beam_search(model, one_sentence(9, 5), opt)[0];
  CHECK(got[0].tokens.empty());
  CHECK(model.step_rows == std::vector<int>{1});  // one step, though 3 more could have finished
}

TEST_CASE("attention rows follow the hypothesis, one per token and </s>, over the real source", "[beam]") {
  TableModel model(15, 9);
  model.set_bias(kEosId, -2.f);
  DecodingConfig opt;
  opt.beam = 4;
  opt.nbest = 4;
  // Two sentences of different lengths: the shorter one's rows carry padding it must not see.
  Batch batch = make_batch({{6, 5, 5, 5, 5, 5}, {8, 5}}, {});
  const auto got = beam_search(model, batch, opt);
  for (int b = 0; b < 2; ++b) {
    const int positions = batch.src_lengths[b];
    for (const auto& h : got[b]) {
      REQUIRE(h.attention.size() == h.tokens.size() + 1);
      for (size_t t = 0; t < h.attention.size(); ++t) {
        std::vector<float> expected(positions, 0.f);
        expected[t % positions] = 1.f;  // the model's one-hot at step t
        CHECK(h.attention[t] == expected);
      }
    }
  }
}

TEST_CASE("a batch gives each sentence the result it gets alone; finished sentences leave the batch", "[beam]") {
  TableModel model(25, 12);
  model.set_bias(kEosId, -1.f);
  DecodingConfig opt;
  opt.beam = 5;
  opt.nbest = 3;
  const std::vector<std::vector<int32_t>> sources = {{4, 5, 5, 5, 5, 5, 5}, {9}, {7, 5, 5}, {12, 5}, {21, 5, 5, 5}};
  const auto batched = beam_search(model, make_batch(sources, {}), opt);
  REQUIRE(batched.size() == sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    const auto alone = beam_search(model, make_batch({sources[i]}, {}), opt)[0];
    REQUIRE(batched[i].size() == alone.size());
    for (size_t k = 0; k < alone.size(); ++k) {
      CHECK(batched[i][k].tokens == alone[k].tokens);
      CHECK(batched[i][k].score == alone[k].score);
    }
  }
  // The 1-token sentence may produce at most 2·1 + 10 tokens; after that it holds no rows.
  TableModel fresh(25, 12);
  fresh.set_bias(kEosId, -30.f);
  beam_search(fresh, make_batch({{4, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5}, {9}}, {}), opt);
  const int short_limit = max_output_length(1, opt);
  REQUIRE(int(fresh.step_rows.size()) > short_limit + 1);
  CHECK(fresh.step_rows[short_limit] == 2 * opt.beam);
  CHECK(fresh.step_rows[short_limit + 1] == opt.beam);
}

TEST_CASE("search runs in eval mode and restores the training flag", "[beam]") {
  TableModel model(10, 1);
  model.set_training(true);
  DecodingConfig opt;
  beam_search(model, one_sentence(5, 2), opt);
  CHECK_FALSE(model.training_in_step);
  CHECK(model.training());
}

TEST_CASE("the search's log-normaliser is log Σ exp of the logits, stable for large ones", "[beam]") {
  std::vector<float> logits;
  for (int v = 0; v < 8000; ++v) logits.push_back(std::sin(0.37f * v) * 12.f + (v % 7 == 0 ? -INFINITY : 0.f));
  for (float shift : {0.f, 1000.f, -1000.f}) {
    std::vector<float> row = logits;
    for (float& l : row) l += shift;
    double top = -INFINITY, sum = 0;
    for (float l : row) top = std::max(top, double(l));
    for (float l : row) sum += std::exp(double(l) - top);
    const double expected = top + std::log(sum);
    CHECK(log_normaliser(row.data(), int(row.size())) == Approx(expected).margin(1e-6 * std::fabs(expected) + 1e-5));
  }
  const std::vector<float> none(5, -INFINITY);
  CHECK(log_normaliser(none.data(), 5) == -INFINITY);
  std::vector<float> with_nan(5, 0.f);
  with_nan[3] = NAN;
  CHECK(std::isnan(log_normaliser(with_nan.data(), 5)));
}

TEST_CASE("step weight holds nest: only the outermost prepares and releases them", "[beam]") {
  TableModel model(7, 1);
  {
    const StepWeightsHold outer(model);
    { const StepWeightsHold inner(model); }
    CHECK(model.hold_calls == std::vector<bool>{true});
  }
  CHECK(model.hold_calls == std::vector<bool>{true, false});
}

TEST_CASE("a prefix is forced, then the search finds the best continuations of it", "[beam][prefix]") {
  const int vocab = 7;
  TableModel model(vocab, 17);
  DecodingConfig opt;
  opt.max_length_ratio = 1;
  opt.max_length_offset = 2;  // 2 source tokens, a 2-token prefix → at most 4 output tokens
  opt.length_penalty = 1.f;
  const std::vector<int32_t> prefix = {6, 4};
  for (int32_t key = 4; key < 12; ++key) {
    std::vector<Scored> expected;  // the enumeration's hypotheses that start with the prefix
    for (const Scored& s : all_hypotheses_best_first(model, key, 4, 1.f, vocab))
      if (s.tokens.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), s.tokens.begin()))
        expected.push_back(s);
    REQUIRE(expected.size() == 13);
    SearchConstraints constraints;
    constraints.prefixes = {prefix};
    opt.beam = 64;  // the whole space after the prefix: the exhaustive optimum
    opt.nbest = 5;
    const auto full = beam_search(model, one_sentence(key, 2), opt, true, constraints)[0];
    REQUIRE(full.size() == 5);
    for (size_t i = 0; i < full.size(); ++i) {
      INFO("key " << key << ", rank " << i);
      CHECK(full[i].tokens == expected[i].tokens);
      CHECK(full[i].score == expected[i].score);
    }
    opt.beam = 3;  // a narrow beam still starts every hypothesis with the prefix and scores it fully
    opt.nbest = 3;
    const auto narrow = beam_search(model, one_sentence(key, 2), opt, true, constraints);
    for (const Hypothesis& h : narrow[0]) {
      REQUIRE(h.tokens.size() >= prefix.size());
      CHECK(std::equal(prefix.begin(), prefix.end(), h.tokens.begin()));
      CHECK(h.log_prob == path_log_prob(model, key, h.tokens));
      CHECK(h.attention.size() == h.tokens.size() + 1);
    }
  }
}

TEST_CASE("a prefix is forced even where the model gives it little probability; others are unaffected",
          "[beam][prefix]") {
  const int vocab = 12;
  TableModel model(vocab, 3);
  model.set_bias(9, -20.f);  // token 9 is very unlikely everywhere
  DecodingConfig opt;
  opt.beam = 4;
  opt.max_length_ratio = 1;
  opt.max_length_offset = 1;  // 3 source tokens → 4 output tokens; a 9-token prefix → 10
  const std::vector<int32_t> long_prefix = {9, 9, 5, 9, 7, 9, 9, 8, 9};
  SearchConstraints constraints;
  constraints.prefixes = {long_prefix, {}};
  std::vector<int32_t> a = {4, 5, 5}, b = {7, 5, 5};
  const auto got = beam_search(model, make_batch({a, b}, {}), opt, true, constraints);
  REQUIRE(got[0].front().tokens.size() >= long_prefix.size());
  CHECK(got[0].front().tokens.size() <= long_prefix.size() + 1);
  CHECK(std::equal(long_prefix.begin(), long_prefix.end(), got[0].front().tokens.begin()));
  CHECK(got[0].front().log_prob == path_log_prob(model, 4, got[0].front().tokens));
  CHECK(got[0].front().log_prob < -100);
  // the other sentence of the batch gets what it gets alone, without a prefix
  const auto alone = beam_search(model, one_sentence(7, 3), opt)[0];
  CHECK(got[1].front().tokens == alone.front().tokens);
  CHECK(got[1].front().log_prob == alone.front().log_prob);
  SearchConstraints wrong;
  wrong.prefixes = {{kEosId}, {}};
  CHECK_THROWS_WITH(beam_search(model, make_batch({a, b}, {}), opt, true, wrong),
                    Catch::Contains("is not a word piece"));
}
