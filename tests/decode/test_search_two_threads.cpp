// Beam search's row scan and sampling's row draws on two threads. ctest runs every test with
// OMP_NUM_THREADS=1 (tests/CMakeLists.txt), and both loops start a parallel region only when a
// step's logits reach 1 << 16 floats (beam_search.cpp kParallelScan, sampling.cpp kParallelRows:
// rows · vocab), so the rest of the suite never runs them on two threads. Here a table model
// (table_model.hpp: logits fixed by the sentence and its prefix, computed without threads) with a
// large vocabulary is searched and sampled on one thread and on two. Each row's candidates or draw
// are one thread's and are merged in row order, so the hypotheses (tokens, scores,
// log-probabilities, attention) and the rows of every step must be identical, bit for bit.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "../two_threads.hpp"
#include "decode/beam_search.hpp"
#include "decode/sampling.hpp"
#include "table_model.hpp"

using namespace heed;
using heed::test::same_bits;
using heed::test::TableModel;
using heed::test::ThreadCountGuard;
using heed::test::use_threads;

namespace {

// The thresholds as the searches define them: a second thread joins from these on.
constexpr int64_t kParallelScan = 1 << 16;  // beam_search.cpp: rows · vocab ≥ this
constexpr int64_t kParallelRows = 1 << 16;  // sampling.cpp: rows · vocab ≥ this
constexpr int kVocab = 4096;
constexpr int kSentences = 16;  // 16 · 4096 = 1 << 16: even the first step, one row per sentence

// Sentences of 3 to 8 tokens; the first token, the table model's key, differs between them.
Batch sentences() {
  std::vector<std::vector<int32_t>> src;
  for (int b = 0; b < kSentences; ++b) {
    std::vector<int32_t> s(3 + b % 6, 5);
    s[0] = 4 + 13 * b;
    src.push_back(s);
  }
  return make_batch(src, {});
}

// Every third sentence starts with a forced two-token prefix: the loops' forced-token branch.
SearchConstraints some_prefixes() {
  SearchConstraints c;
  c.prefixes.resize(kSentences);
  for (int b = 0; b < kSentences; b += 3) c.prefixes[b] = {300 + b, 700 + b};
  return c;
}

struct Run {
  std::vector<std::vector<Hypothesis>> hypotheses;
  std::vector<int> step_rows;  // the rows of each step
};

// `search` (model, batch) → hypotheses, on `threads` threads, with a fresh table model whose
// </s> is likely enough (bias 1 against logits in [-3, 3)) that hypotheses end at various steps.
template <class Search>
Run run_on(int threads, Search&& search) {
  use_threads(threads);
  TableModel model(kVocab, 17);
  model.set_bias(kEosId, 1.f);
  Run r;
  r.hypotheses = search(model, sentences());
  r.step_rows = model.step_rows;
  return r;
}

// Steps whose logits reached the threshold: those whose loop ran on two threads.
int steps_from(const std::vector<int>& step_rows, int64_t threshold) {
  int n = 0;
  for (int rows : step_rows) n += (static_cast<int64_t>(rows) * kVocab >= threshold) ? 1 : 0;
  return n;
}

void require_identical(const Run& one, const Run& two) {
  REQUIRE(one.step_rows == two.step_rows);
  REQUIRE(one.hypotheses.size() == static_cast<size_t>(kSentences));
  REQUIRE(two.hypotheses.size() == one.hypotheses.size());
  for (size_t b = 0; b < one.hypotheses.size(); ++b) {
    REQUIRE(two.hypotheses[b].size() == one.hypotheses[b].size());
    REQUIRE(!one.hypotheses[b].empty());
    for (size_t k = 0; k < one.hypotheses[b].size(); ++k) {
      const Hypothesis &x = one.hypotheses[b][k], &y = two.hypotheses[b][k];
      INFO("sentence " << b << ", hypothesis " << k << ": scores " << x.score << " and " << y.score);
      CHECK(x.tokens == y.tokens);
      CHECK(same_bits(x.score, y.score));
      CHECK(same_bits(x.log_prob, y.log_prob));
      CHECK(x.attention == y.attention);
    }
  }
}

}  // namespace

TEST_CASE("beam search above its parallel scan: the same hypotheses on one thread and on two", "[beam][threads]") {
  ThreadCountGuard restore;
  DecodingConfig opt;
  opt.beam = 4;
  opt.nbest = 4;
  const SearchConstraints constraints = some_prefixes();
  auto search = [&](TableModel& model, const Batch& batch) {
    return beam_search(model, batch, opt, true, constraints);
  };
  const Run one = run_on(1, search), two = run_on(2, search);
  REQUIRE(!one.step_rows.empty());
  REQUIRE(static_cast<int64_t>(one.step_rows[0]) * kVocab >= kParallelScan);  // the first step: a row per sentence
  const int parallel_steps = steps_from(one.step_rows, kParallelScan);
  INFO(parallel_steps << " of " << one.step_rows.size() << " steps at or above the threshold");
  // The second step too: 4 rows per sentence without a prefix (none can end at the first), 1 per
  // prefixed one, 46 in all.
  REQUIRE(parallel_steps >= 2);
  require_identical(one, two);
}

TEST_CASE("sampling above its parallel rows: the same samples on one thread and on two", "[sampling][threads]") {
  ThreadCountGuard restore;
  const SearchConstraints constraints = some_prefixes();
  for (const SamplingKind kind : {SamplingKind::full, SamplingKind::top_k, SamplingKind::top_p}) {
    DecodingConfig d;
    d.nbest = 4;  // samples per sentence: 64 rows from the first step on
    d.sampling.kind = kind;
    d.sampling.top_k = 20;
    d.sampling.top_p = 0.9f;
    d.temperature = 0.8f;
    INFO("sampling " << sampling_name(d.sampling));
    auto draw = [&](TableModel& model, const Batch& batch) { return sample(model, batch, d, true, constraints); };
    const Run one = run_on(1, draw), two = run_on(2, draw);
    REQUIRE(!one.step_rows.empty());
    REQUIRE(one.step_rows[0] == kSentences * d.nbest);
    REQUIRE(static_cast<int64_t>(one.step_rows[0]) * kVocab >= kParallelRows);
    const int parallel_steps = steps_from(one.step_rows, kParallelRows);
    INFO(parallel_steps << " of " << one.step_rows.size() << " steps at or above the threshold");
    REQUIRE(parallel_steps >= 3);  // a sample ends only when it draws </s>, one token of 4096
    require_identical(one, two);
  }
}
