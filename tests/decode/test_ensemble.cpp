// Ensembles against a hand computation: two table models whose averaged, renormalised
// log-probabilities are enumerated here; a full-width beam over the ensemble must find the same
// n-best list with the same scores. Also: greedy and batched ensembles, attention averaging,
// vocabulary checks, and forced scores of an ensemble of real models against its search.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "../fixtures/tiny_models.hpp"
#include "decode/ensemble.hpp"
#include "decode/forced_scores.hpp"
#include "models/factory.hpp"
#include "table_model.hpp"

using namespace heed;
using heed::test::TableModel;

namespace {

// log p_ensemble(· | key, prefix): mean of the members' log-probabilities, renormalised (double).
std::vector<double> ensemble_log_probs(const std::vector<const TableModel*>& members, int32_t key,
                                       const std::vector<int32_t>& prefix, int vocab) {
  std::vector<double> mean(vocab, 0.0);
  for (const TableModel* m : members) {
    const auto lp = m->log_probs(key, prefix);
    for (int v = 0; v < vocab; ++v) mean[v] += lp[v] / members.size();
  }
  double z = 0;
  for (double x : mean) z += std::exp(x);
  for (double& x : mean) x -= std::log(z);
  return mean;
}

struct Scored {
  std::vector<int32_t> tokens;
  double log_prob, score;
};

void enumerate(const std::vector<const TableModel*>& members, int32_t key, int max_len, int vocab,
               std::vector<int32_t>& prefix, double sum, std::vector<Scored>& out) {
  const auto lp = ensemble_log_probs(members, key, prefix, vocab);
  const double total = sum + lp[kEosId];
  out.push_back({prefix, total, total / double(prefix.size() + 1)});
  if (int(prefix.size()) == max_len) return;
  for (int32_t v = 4; v < vocab; ++v) {
    prefix.push_back(v);
    enumerate(members, key, max_len, vocab, prefix, sum + lp[v], out);
    prefix.pop_back();
  }
}

}  // namespace

TEST_CASE("a full-width beam over an ensemble finds the n-best of the averaged distribution", "[ensemble]") {
  const int vocab = 7;
  TableModel a(vocab, 31), b(vocab, 32), c(vocab, 33);
  for (const auto& members : std::vector<std::vector<TableModel*>>{{&a, &b}, {&a, &b, &c}}) {
    Ensemble ensemble(std::vector<Seq2Seq*>(members.begin(), members.end()));
    const std::vector<const TableModel*> tables(members.begin(), members.end());
    DecodingConfig opt;
    opt.beam = 256;
    opt.nbest = 6;
    opt.max_length_ratio = 1;
    opt.max_length_offset = 2;  // 2 source tokens → at most 4 output tokens
    for (int32_t key = 4; key < 12; ++key) {
      std::vector<Scored> expected;
      std::vector<int32_t> prefix;
      enumerate(tables, key, 4, vocab, prefix, 0.0, expected);
      std::stable_sort(expected.begin(), expected.end(), [](const auto& x, const auto& y) { return x.score > y.score; });
      const auto got = beam_search(ensemble, make_batch({{key, 5}}, {}), opt)[0];
      REQUIRE(got.size() == 6);
      for (size_t i = 0; i < got.size(); ++i) {
        INFO(members.size() << " models, key " << key << ", rank " << i);
        CHECK(got[i].tokens == expected[i].tokens);
        CHECK(got[i].log_prob == Approx(expected[i].log_prob).epsilon(1e-5));
        CHECK(got[i].score == Approx(expected[i].score).epsilon(1e-5));
      }
    }
  }
}

TEST_CASE("an ensemble of one model decodes as the model; batches and attention work", "[ensemble]") {
  const int vocab = 30;
  TableModel a(vocab, 41), b(vocab, 42);
  DecodingConfig opt;
  opt.beam = 4;
  opt.nbest = 2;
  opt.max_length_ratio = 2;
  opt.max_length_offset = 3;
  const Batch batch = make_batch({{4, 5, 6}, {9, 5}, {12, 5, 5, 5}}, {});
  Ensemble alone({&a});
  const auto single = beam_search(a, batch, opt), via_ensemble = beam_search(alone, batch, opt);
  for (size_t s = 0; s < single.size(); ++s)
    for (size_t k = 0; k < single[s].size(); ++k) {
      CHECK(via_ensemble[s][k].tokens == single[s][k].tokens);
      CHECK(via_ensemble[s][k].log_prob == Approx(single[s][k].log_prob).margin(1e-5));
      CHECK(via_ensemble[s][k].attention == single[s][k].attention);  // one-hot, the same in both
    }
  // a batch gives each sentence of a two-model ensemble what it gets alone
  Ensemble pair({&a, &b});
  const auto batched = beam_search(pair, batch, opt);
  for (int s = 0; s < batch.size; ++s) {
    std::vector<int32_t> src(batch.src.begin() + s * batch.src_len,
                             batch.src.begin() + s * batch.src_len + batch.src_lengths[s] - 1);
    const auto one = beam_search(pair, make_batch({src}, {}), opt)[0];
    CHECK(batched[s].front().tokens == one.front().tokens);
    CHECK(batched[s].front().log_prob == one.front().log_prob);
  }
}

TEST_CASE("an ensemble needs the same vocabularies", "[ensemble]") {
  TableModel a(20, 1), b(21, 2);
  CHECK_THROWS_WITH(Ensemble({&a, &b}), Catch::Contains("ensembles need the same vocabularies"));
  CHECK_THROWS_WITH(Ensemble({}), Catch::Contains("at least one model"));
}

TEST_CASE("forced scores of an ensemble of real models match its beam search's scores", "[ensemble][forced]") {
  const int vocab = 23;
  auto gru = make_model(test::tiny_model_config(Arch::gru_bahdanau), vocab, vocab, 3);
  auto transformer = make_model(test::tiny_model_config(Arch::transformer), vocab, vocab, 4);
  Ensemble ensemble({gru.get(), transformer.get()});
  CHECK(ensemble.arch() == "ensemble of gru-bahdanau + transformer");
  DecodingConfig opt;
  opt.beam = 3;
  opt.nbest = 3;
  opt.length_penalty = 0.6f;
  const std::vector<std::vector<int32_t>> sources = {{5, 9, 13, 7}, {20, 4}, {6, 6, 6, 6, 6, 8}};
  const auto hypotheses = beam_search(ensemble, make_batch(sources, {}), opt);
  std::vector<std::vector<int32_t>> src, tgt;
  std::vector<const Hypothesis*> searched;
  for (size_t s = 0; s < sources.size(); ++s)
    for (const Hypothesis& h : hypotheses[s]) {
      src.push_back(sources[s]);
      tgt.push_back(h.tokens);
      searched.push_back(&h);
    }
  const auto scores = forced_scores(ensemble, src, tgt, opt);
  REQUIRE(searched.size() == 9);  // 3 hypotheses for each of 3 sentences
  REQUIRE(scores.size() == searched.size());
  for (size_t i = 0; i < scores.size(); ++i) {
    CHECK(scores[i].log_prob == Approx(searched[i]->log_prob).margin(2e-4));
    CHECK(scores[i].score == Approx(searched[i]->score).margin(2e-4));
  }
}
