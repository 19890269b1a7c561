// GRU-Bahdanau incremental decoding against the teacher-forced forward pass, and reorder()
// (see step_checks.hpp).
#include <catch2/catch.hpp>

#include "../fixtures/tiny_models.hpp"
#include "models/gru_bahdanau.hpp"
#include "step_checks.hpp"

using namespace heed;

namespace {
std::unique_ptr<Seq2Seq> tiny(bool tie_output, uint64_t seed) {
  ModelConfig c = test::tiny_model_config(Arch::gru_bahdanau);
  c.dropout = 0.1f;  // must not matter: decoding runs in eval mode
  c.gru.tie_output = tie_output;
  return make_gru_bahdanau(c, 29, 29, seed);
}
}  // namespace

TEST_CASE("GRU step-by-step decoding equals the teacher-forced forward pass", "[gru][step]") {
  SECTION("separate output layer") { step_checks::steps_match_forward(*tiny(false, 3), step_checks::test_batch()); }
  SECTION("tied output layer") { step_checks::steps_match_forward(*tiny(true, 4), step_checks::test_batch()); }
}

TEST_CASE("GRU reorder follows beams: repeated, permuted and dropped rows", "[gru][step]") {
  step_checks::reorder_follows_rows(*tiny(false, 5), step_checks::test_batch());
}

TEST_CASE("GRU decoding with held step weights equals weights prepared per batch", "[gru][step]") {
  step_checks::held_weights_match(*tiny(false, 6), step_checks::test_batch());
}
