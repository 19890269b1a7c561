// Forced decoding (heed score) against the search: the log-probability the training forward pass
// gives each hypothesis equals the one beam search accumulated step by step, for every
// architecture; batching does not change a score; lengths are checked, never cut.
#include <catch2/catch.hpp>
#include <cmath>

#include "../fixtures/tiny_models.hpp"
#include "decode/beam_search.hpp"
#include "decode/forced_scores.hpp"
#include "models/factory.hpp"

using namespace heed;

TEST_CASE("forced scores equal beam search's scores of its own hypotheses", "[forced]") {
  const int vocab = 31;
  for (Arch arch : {Arch::gru_bahdanau, Arch::transformer, Arch::ntm}) {
    auto model = make_model(test::tiny_model_config(arch), vocab, vocab, 7);
    DecodingConfig opt;
    opt.beam = 4;
    opt.nbest = 4;
    opt.length_penalty = 1.f;
    const std::vector<std::vector<int32_t>> sources = {{5, 9, 13, 7, 22}, {30, 4}, {6, 6, 8}, {11}};
    const auto hypotheses = beam_search(*model, make_batch(sources, {}), opt);
    std::vector<std::vector<int32_t>> src, tgt;
    std::vector<Hypothesis> searched;
    for (size_t s = 0; s < sources.size(); ++s)
      for (const Hypothesis& h : hypotheses[s]) {
        src.push_back(sources[s]);
        tgt.push_back(h.tokens);
        searched.push_back(h);
      }
    opt.batch_size = 5;  // batches mix sentences and lengths
    const auto scores = forced_scores(*model, src, tgt, opt);
    REQUIRE(scores.size() == searched.size());
    for (size_t i = 0; i < scores.size(); ++i) {
      INFO(name_of(arch) << " hypothesis " << i);
      CHECK(scores[i].token_log_probs.size() == searched[i].tokens.size() + 1);
      CHECK(scores[i].log_prob == Approx(searched[i].log_prob).margin(1e-4));
      CHECK(scores[i].score == Approx(searched[i].score).margin(1e-4));
      float sum = 0;
      for (float lp : scores[i].token_log_probs) {
        CHECK(lp <= 0);
        sum += lp;
      }
      CHECK(sum == scores[i].log_prob);
    }
    // one pair at a time gives the same numbers (to float rounding)
    for (size_t i = 0; i < src.size(); i += 3) {
      const auto alone = forced_scores(*model, {src[i]}, {tgt[i]}, opt)[0];
      REQUIRE(alone.token_log_probs.size() == tgt[i].size() + 1);  // each token and </s>
      REQUIRE(alone.token_log_probs.size() == scores[i].token_log_probs.size());
      for (size_t t = 0; t < alone.token_log_probs.size(); ++t)
        CHECK(alone.token_log_probs[t] == Approx(scores[i].token_log_probs[t]).margin(1e-5));
    }
  }
}

TEST_CASE("forced scores refuse what they cannot score honestly", "[forced]") {
  const int vocab = 31;
  ModelConfig config = test::tiny_model_config(Arch::transformer);
  config.transformer.max_positions = 8;
  auto model = make_model(config, vocab, vocab, 1);
  DecodingConfig opt;
  CHECK(forced_scores(*model, {{5, 6}}, {{7, 8, 9, 10, 11, 12, 13}}, opt).size() == 1);  // 7 + <s> = 8 positions
  CHECK_THROWS_WITH(forced_scores(*model, {{5, 6}}, {{7, 8, 9, 10, 11, 12, 13, 14}}, opt),
                    Catch::Contains("pair 0: the target has 8 tokens; the model takes at most 7"));
  CHECK_THROWS_WITH(forced_scores(*model, {{5}, {6}}, {{7}}, opt), Catch::Contains("2 sources but 1 targets"));
  CHECK_THROWS_WITH(forced_scores(*model, {{5}}, {{31}}, opt), Catch::Contains("outside the 31-token vocabulary"));
}
