// Transformer incremental decoding (start/step with per-layer key/value caches) against the
// teacher-forced forward pass, and reorder() of every cache (see step_checks.hpp).
#include <catch2/catch.hpp>

#include "../fixtures/tiny_models.hpp"
#include "models/transformer.hpp"
#include "step_checks.hpp"

using namespace heed;

namespace {
std::unique_ptr<Seq2Seq> tiny(bool pre_norm, FeedForwardActivation activation, uint64_t seed, int heads = 4) {
  ModelConfig c = test::tiny_model_config(Arch::transformer);
  c.dropout = 0.1f;  // must not matter: decoding runs in eval mode
  c.transformer.heads = heads;
  c.transformer.pre_norm = pre_norm;
  c.transformer.activation = activation;
  return make_transformer(c, 29, 29, seed);
}
}  // namespace

TEST_CASE("Transformer step-by-step decoding equals the teacher-forced forward pass", "[transformer][step]") {
  SECTION("post-norm, relu") {
    step_checks::steps_match_forward(*tiny(false, FeedForwardActivation::relu, 7), step_checks::test_batch());
  }
  SECTION("pre-norm, gelu") {
    step_checks::steps_match_forward(*tiny(true, FeedForwardActivation::gelu, 8), step_checks::test_batch());
  }
  SECTION("one head") {
    step_checks::steps_match_forward(*tiny(false, FeedForwardActivation::relu, 9, 1), step_checks::test_batch());
  }
}

TEST_CASE("Transformer reorder follows beams: repeated, permuted and dropped rows", "[transformer][step]") {
  step_checks::reorder_follows_rows(*tiny(false, FeedForwardActivation::relu, 11), step_checks::test_batch());
  step_checks::reorder_follows_rows(*tiny(false, FeedForwardActivation::relu, 12, 1), step_checks::test_batch());
}

TEST_CASE("Transformer positions beyond max_positions are an error, not a crash", "[transformer][step]") {
  ModelConfig c = test::tiny_model_config(Arch::transformer);
  c.transformer.max_positions = 4;
  auto model = make_transformer(c, 29, 29, 1);
  CHECK_NOTHROW(model->encode(make_batch({{5, 6, 7}}, {})));
  CHECK_THROWS_WITH(model->encode(make_batch({{5, 6, 7, 8}}, {})), Catch::Contains("max_positions (4)"));
  auto state = model->start(model->encode(make_batch({{5}}, {})));
  for (int t = 0; t < 4; ++t) model->step(*state, {2});
  CHECK_THROWS_WITH(model->step(*state, {2}), Catch::Contains("max_positions"));
}

TEST_CASE("Transformer decoding with held step weights equals weights prepared per batch", "[transformer][step]") {
  step_checks::held_weights_match(*tiny(false, FeedForwardActivation::relu, 13), step_checks::test_batch());
}
