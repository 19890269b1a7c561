// The Neural Turing Machine (models/ntm.cpp): finite-difference gradients of every parameter of a
// whole model on odd sizes (one read and one write head; two read heads with more shifts than a
// 3-row memory has rows), its closed-form parameter count, and the decoder checks every
// architecture passes (step_checks.hpp): step == forward with teacher forcing, reorder() equal to
// recomputing the reordered batch. It has no prepared step weights, so int8 step precision (with or
// without a hold) must leave its steps as they are. Padding invariance: test_padding_invariance.
#include <catch2/catch.hpp>

#include <cstdio>
#include <vector>

#include "model_gradcheck.hpp"
#include "models/ntm.hpp"
#include "step_checks.hpp"

using namespace heed;

namespace {
ModelConfig tiny(int rows, int read_heads, int write_heads, int shift_width) {
  ModelConfig c;
  c.arch = Arch::ntm;
  c.dropout = 0;
  c.ntm.emb_dim = 3;
  c.ntm.controller_hidden = 5;
  c.ntm.memory_rows = rows;
  c.ntm.memory_width = 3;
  c.ntm.read_heads = read_heads;
  c.ntm.write_heads = write_heads;
  c.ntm.shift_width = shift_width;
  return c;
}

void check_ntm(const ModelConfig& c) {
  const int V = 7;  // few parameters: every one is perturbed four times
  auto model = make_ntm(c, V, V, 3);
  Batch batch = make_batch({{4, 5, 6, 4}, {6}}, {{5, 4, 6}, {4}});
  const double worst = gradcheck::check_model_gradients(*model, batch);
  std::printf("ntm gradcheck (N %d, R %d, W %d, shift %d): max scaled error %.2e\n", c.ntm.memory_rows,
              c.ntm.read_heads, c.ntm.write_heads, c.ntm.shift_width, worst);
}
}  // namespace

TEST_CASE("NTM gradients match finite differences", "[ntm][gradcheck]") {
  SECTION("7 rows, one read and one write head, shifts ±1") { check_ntm(tiny(7, 1, 1, 1)); }
  SECTION("3 rows, two read heads, two write heads, shifts ±2 (wrapping)") { check_ntm(tiny(3, 2, 2, 2)); }
  SECTION("7 rows, a learned initial memory") {
    ModelConfig c = tiny(7, 1, 1, 1);
    c.ntm.learned_memory = true;
    check_ntm(c);
  }
}

TEST_CASE("NTM parameter count matches its closed form", "[ntm]") {
  for (const ModelConfig& c : {tiny(7, 1, 1, 1), tiny(3, 2, 2, 2)}) {
    auto model = make_ntm(c, 13, 17, 1);
    CHECK(model->parameters().count() == ntm_parameter_count(c, 13, 17));
  }
  ModelConfig shared = tiny(5, 1, 1, 1);
  shared.share_embeddings = true;
  CHECK(make_ntm(shared, 13, 13, 1)->parameters().count() == ntm_parameter_count(shared, 13, 13));
  ModelConfig learned = tiny(5, 1, 1, 1);
  learned.ntm.learned_memory = true;  // the memory bias among the parameters
  CHECK(make_ntm(learned, 13, 13, 1)->parameters().count() == ntm_parameter_count(learned, 13, 13));
  CHECK(ntm_parameter_count(learned, 13, 13) == ntm_parameter_count(tiny(5, 1, 1, 1), 13, 13) + 5 * 3);
}

TEST_CASE("NTM step-by-step decoding equals the teacher-forced forward pass", "[ntm][step]") {
  ModelConfig c = tiny(9, 2, 1, 1);
  c.ntm.controller_hidden = 12;
  auto model = make_ntm(c, 29, 29, 3);
  REQUIRE(model->memory_rows() == 9);
  step_checks::steps_match_forward(*model, step_checks::test_batch());
}

TEST_CASE("NTM reorder moves memory, head weights and controller with the beams", "[ntm][step]") {
  auto model = make_ntm(tiny(9, 1, 1, 1), 29, 29, 5);
  step_checks::reorder_follows_rows(*model, step_checks::test_batch());
}

TEST_CASE("NTM has no step weights: int8 step precision leaves its steps bitwise unchanged", "[ntm][step][int8]") {
  auto model = make_ntm(tiny(9, 1, 1, 1), 29, 29, 6);
  CHECK_FALSE(model->has_step_weights());
  const EvalMode eval(*model);
  NoGradGuard no_grad;
  const Batch batch = step_checks::test_batch();
  REQUIRE(model->step_precision() == StepPrecision::fp32);
  const std::vector<float> fp32 = step_checks::first_steps(*model, batch);
  model->set_step_precision(StepPrecision::int8);
  CHECK(step_checks::first_steps(*model, batch) == fp32);  // weights prepared by start(), were there any
  {
    const StepWeightsHold hold(*model);  // as translation decodes: the hold prepares them, were there any
    CHECK(step_checks::first_steps(*model, batch) == fp32);
  }
  CHECK(step_checks::first_steps(*model, batch) == fp32);
  model->set_step_precision(StepPrecision::fp32);
}
