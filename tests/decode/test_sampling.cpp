// Sampling against the distributions it should draw from: chi-square tests of the first token
// drawn for each restriction (full, topk, topp) and temperature on a table model whose
// probabilities are known, with the same statistic shown to reject a wrong distribution; scores
// are the model's own; draws are reproducible and independent of batching; prefixes are kept.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <numeric>

#include "decode/sampling.hpp"
#include "table_model.hpp"

using namespace heed;
using heed::test::TableModel;

namespace {

constexpr int kVocab = 12;  // 4 specials + 8 words

// Limits that leave room for exactly one token before </s>: each sample is its first draw.
DecodingConfig one_token(const std::string& sampling, float temperature, int samples) {
  DecodingConfig d;
  d.sampling = Sampling{};
  if (sampling == "full") d.sampling.kind = SamplingKind::full;
  if (sampling.rfind("topk:", 0) == 0) {
    d.sampling.kind = SamplingKind::top_k;
    d.sampling.top_k = std::stoi(sampling.substr(5));
  }
  if (sampling.rfind("topp:", 0) == 0) {
    d.sampling.kind = SamplingKind::top_p;
    d.sampling.top_p = std::stof(sampling.substr(5));
  }
  d.temperature = temperature;
  d.nbest = samples;
  d.max_length_ratio = 0.01f;
  d.max_length_offset = 0;  // ceil(0.01 · 2) + 0 = 1 token
  return d;
}

// The distribution the first token should follow, computed here from the logits by hand:
// allowed tokens (</s> and the words), logits / T, restricted, renormalised.
std::vector<double> expected_first_token(const std::vector<float>& logits, const std::string& sampling, double t) {
  std::vector<int> tokens = {kEosId};
  for (int v = 4; v < kVocab; ++v) tokens.push_back(v);
  std::sort(tokens.begin(), tokens.end(), [&](int a, int b) { return logits[a] > logits[b]; });
  std::vector<double> p(kVocab, 0.0);
  double total = 0;
  for (int v : tokens) total += std::exp(logits[v] / t);
  size_t keep = tokens.size();
  if (sampling.rfind("topk:", 0) == 0) keep = std::stoul(sampling.substr(5));
  if (sampling.rfind("topp:", 0) == 0) {
    const double target = std::stod(sampling.substr(5));
    double mass = 0;
    for (keep = 0; keep < tokens.size() && mass < target;) mass += std::exp(logits[tokens[keep++]] / t) / total;
  }
  double kept = 0;
  for (size_t i = 0; i < keep; ++i) kept += std::exp(logits[tokens[i]] / t);
  for (size_t i = 0; i < keep; ++i) p[tokens[i]] = std::exp(logits[tokens[i]] / t) / kept;
  return p;
}

// Pearson's statistic over the tokens of non-zero expected probability; a draw of a token with
// probability 0 makes it infinite.
double chi_square(const std::vector<int>& counts, const std::vector<double>& p, int n, int& df) {
  double stat = 0;
  df = -1;
  for (int v = 0; v < kVocab; ++v) {
    if (p[v] == 0) {
      if (counts[v] > 0) return INFINITY;
      continue;
    }
    const double e = p[v] * n;
    stat += (counts[v] - e) * (counts[v] - e) / e;
    ++df;
  }
  return stat;
}

// Upper 0.1 % points of the chi-square distribution, by degrees of freedom.
double critical_001(int df) {
  static const double table[] = {0, 10.83, 13.82, 16.27, 18.47, 20.52, 22.46, 24.32, 26.12, 27.88};
  return table[df];
}

Batch one_sentence(int32_t key) { return make_batch({{key, 5}}, {}); }

}  // namespace

TEST_CASE("sampled first tokens follow the tempered, restricted distribution (chi-square)", "[sampling]") {
  TableModel model(kVocab, 7);
  const int32_t key = 6;
  const std::vector<float> logits = model.logits(key, {});
  const int n = 20000;
  for (const std::string sampling : {"full", "topk:1", "topk:3", "topp:0.5", "topp:0.9"}) {
    for (const float t : {1.f, 0.5f, 2.f}) {
      const auto samples = sample(model, one_sentence(key), one_token(sampling, t, n))[0];
      REQUIRE(samples.size() == size_t(n));
      std::vector<int> counts(kVocab, 0);
      for (const Hypothesis& h : samples) {
        REQUIRE(h.tokens.size() <= 1);
        ++counts[h.tokens.empty() ? kEosId : h.tokens[0]];
      }
      const auto p = expected_first_token(logits, sampling, t);
      int df = 0;
      const double stat = chi_square(counts, p, n, df);
      INFO(sampling << ", temperature " << t << ": chi-square " << stat << " with " << df << " degrees of freedom");
      if (df == 0) {
        CHECK(stat == 0);  // one token possible: drawn every time
      } else {
        CHECK(stat < critical_001(df));
      }
      // The same statistic rejects the distribution of another temperature: the test can fail.
      if (sampling == "full" && t != 1.f) {
        const auto wrong = expected_first_token(logits, sampling, 1.0);
        int wrong_df = 0;
        CHECK(chi_square(counts, wrong, n, wrong_df) > critical_001(wrong_df));
      }
    }
  }
}

TEST_CASE("a sample's score is the model's own log-probability, whatever the temperature", "[sampling]") {
  TableModel model(kVocab, 9);
  DecodingConfig d = one_token("topk:4", 2.f, 50);
  d.max_length_ratio = 2;
  d.max_length_offset = 3;
  d.length_penalty = 1;
  const auto samples = sample(model, one_sentence(5), d)[0];
  REQUIRE(samples.size() == 50);
  for (size_t i = 0; i < samples.size(); ++i) {
    const Hypothesis& h = samples[i];
    std::vector<int32_t> prefix;
    float sum = 0;
    for (int32_t t : h.tokens) {
      sum += model.log_probs(5, prefix)[t];
      prefix.push_back(t);
    }
    sum += model.log_probs(5, prefix)[kEosId];
    CHECK(h.log_prob == sum);
    CHECK(h.score == Approx(sum / float(h.tokens.size() + 1)).epsilon(1e-6));
    CHECK(h.attention.size() == h.tokens.size() + 1);
    if (i > 0) CHECK(h.score <= samples[i - 1].score);  // best first
  }
}

TEST_CASE("samples are reproducible, independent of the batch, and change with the seed", "[sampling]") {
  TableModel model(kVocab, 4);
  DecodingConfig d = one_token("full", 1.f, 6);
  d.max_length_ratio = 3;
  d.max_length_offset = 2;
  const auto tokens_of = [](const std::vector<Hypothesis>& hs) {
    std::vector<std::vector<int32_t>> out;
    for (const auto& h : hs) out.push_back(h.tokens);
    return out;
  };
  SearchConstraints as_line_7;
  as_line_7.ids = {7};
  const auto alone = tokens_of(sample(model, one_sentence(6), d, true, as_line_7)[0]);
  CHECK(alone == tokens_of(sample(model, one_sentence(6), d, true, as_line_7)[0]));
  // the same sentence as line 7 in a batch with others, in another position
  SearchConstraints in_batch;
  in_batch.ids = {3, 7, 11};
  const auto batch = sample(model, make_batch({{9, 5}, {6, 5}, {4, 5, 5, 5}}, {}), d, true, in_batch);
  CHECK(tokens_of(batch[1]) == alone);
  CHECK(tokens_of(batch[0]) != alone);
  // another seed, or another line, draws other samples
  d.sampling_seed = 2;
  CHECK(tokens_of(sample(model, one_sentence(6), d, true, as_line_7)[0]) != alone);
  d.sampling_seed = 1;
  as_line_7.ids = {8};
  CHECK(tokens_of(sample(model, one_sentence(6), d, true, as_line_7)[0]) != alone);
}

TEST_CASE("sampling keeps prefixes and the length limit; search() dispatches on decoding.sampling", "[sampling]") {
  TableModel model(kVocab, 12);
  DecodingConfig d = one_token("topp:0.9", 1.f, 20);
  d.max_length_ratio = 1;
  d.max_length_offset = 1;  // 2 source tokens → 3; a 2-token prefix → at least 3
  SearchConstraints constraints;
  constraints.prefixes = {{7, 8}};
  const auto samples = sample(model, one_sentence(4), d, true, constraints);
  REQUIRE(samples.size() == 1);
  REQUIRE(samples[0].size() == 20);
  for (const Hypothesis& h : samples[0]) {
    REQUIRE(h.tokens.size() >= 2);
    CHECK(h.tokens.size() <= 3);
    CHECK(h.tokens[0] == 7);
    CHECK(h.tokens[1] == 8);
  }
  // search() with sampling on samples (the same draws: the same seed and sentence ids)
  const auto dispatched = search(model, one_sentence(4), d, true, constraints);
  REQUIRE(dispatched.size() == 1);
  REQUIRE(dispatched[0].size() == samples[0].size());
  for (size_t k = 0; k < samples[0].size(); ++k) CHECK(dispatched[0][k].tokens == samples[0][k].tokens);
  DecodingConfig beam;
  beam.beam = 3;
  const auto by_search = search(model, one_sentence(4), beam)[0];
  const auto by_beam = beam_search(model, one_sentence(4), beam)[0];
  CHECK(by_search.front().tokens == by_beam.front().tokens);
  CHECK_THROWS_WITH(sample(model, one_sentence(4), beam), Catch::Contains("sampling is none"));
}

TEST_CASE("draw_token: no allowed finite logit or a NaN gives -1", "[sampling]") {
  DecodingConfig d = one_token("full", 1.f, 1);
  std::vector<char> allowed(kVocab, 1);
  std::vector<float> logits(kVocab, -INFINITY);
  CHECK(draw_token(logits.data(), kVocab, allowed, d, 0.5) == -1);
  logits[5] = 1;
  CHECK(draw_token(logits.data(), kVocab, allowed, d, 0.999999) == 5);
  logits[6] = NAN;
  CHECK(draw_token(logits.data(), kVocab, allowed, d, 0.5) == -1);
}
