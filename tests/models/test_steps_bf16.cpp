// Decoding in bf16 against the training forward pass in bf16, both architectures: step-by-step
// logits and attention rows equal forward()'s within bf16 tolerances, and held step weights
// (packed in bf16) give the same steps as weights prepared per batch. The two sides differ by
// more than summation order: an fp32 difference of one rounding can move a bf16 operand by a
// whole bf16 step (2⁻⁸ relative), and the Transformer's step scores its keys in fp32 (the fused
// cached attention, heed's own loops) where forward() multiplies Q·Kᵀ in bf16. Measured worst on
// these tiny models' O(1) logits: GRU 1.0e-3, Transformer 1.7e-2 (attention 6e-4); the
// tolerances are 5e-2 and 1e-2, where a step that read the wrong weights or positions is off by
// O(1). Skipped on a CPU without bf16 (catch_main.cpp).
#include <catch2/catch.hpp>

#include "../fixtures/tiny_models.hpp"
#include "models/gru_bahdanau.hpp"
#include "models/transformer.hpp"
#include "step_checks.hpp"
#include "tensor/precision.hpp"

using namespace heed;

TEST_CASE("bf16: GRU-Bahdanau steps equal the forward pass within bf16 tolerance", "[bf16][gru][step]") {
  ScopedMatmulPrecision bf16(MatmulPrecision::bf16);
  ModelConfig c = test::tiny_model_config(Arch::gru_bahdanau);
  auto model = make_gru_bahdanau(c, 29, 29, 3);
  step_checks::steps_match_forward(*model, step_checks::test_batch(), 5e-2f, 1e-2f);
  step_checks::held_weights_match(*model, step_checks::test_batch());
}

TEST_CASE("bf16: Transformer steps equal the forward pass within bf16 tolerance", "[bf16][transformer][step]") {
  ScopedMatmulPrecision bf16(MatmulPrecision::bf16);
  for (const bool pre_norm : {false, true}) {
    ModelConfig c = test::tiny_model_config(Arch::transformer);
    c.transformer.pre_norm = pre_norm;
    auto model = make_transformer(c, 29, 29, 7);
    step_checks::steps_match_forward(*model, step_checks::test_batch(), 5e-2f, 1e-2f);
    step_checks::held_weights_match(*model, step_checks::test_batch());
  }
}
