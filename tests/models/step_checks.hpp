#pragma once
// Checks every architecture's incremental decoder must pass (beam search relies on them):
// stepping with the teacher-forced inputs reproduces forward(), reorder() gathers rows, and held
// step weights give the same steps as weights prepared per batch.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "models/seq2seq.hpp"
#include "tensor/ops.hpp"
#include "tokens/batch.hpp"

namespace heed::step_checks {

// Three pairs of different lengths; 20 targets in the first, so per-step caches must grow.
inline Batch test_batch() {
  std::vector<std::vector<int32_t>> src = {{5, 6, 7, 8, 9}, {10, 11}, {12, 13, 14, 15, 16, 17, 18}};
  std::vector<std::vector<int32_t>> tgt(3);
  for (int i = 0; i < 20; ++i) tgt[0].push_back(4 + (i * 7) % 25);
  tgt[1] = {20, 21, 22};
  for (int i = 0; i < 11; ++i) tgt[2].push_back(4 + (i * 3) % 25);
  return make_batch(src, tgt);
}

inline float max_diff(const float* a, const float* b, int64_t n) {
  float m = 0;
  for (int64_t i = 0; i < n; ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

// Eval mode: step t fed tgt_in[:, t] gives the logits forward()[:, t] (≤ 1e-4) and the attention
// row last_attention()[:, t] (≤ 1e-5, exactly 0 at source pads; over memory rows for a model that
// has them). bf16 products pass their own tolerances (test_steps_bf16.cpp).
inline void steps_match_forward(Seq2Seq& model, const Batch& batch, float logit_tolerance = 1e-4f,
                                float attention_tolerance = 1e-5f) {
  model.set_training(false);
  const int B = batch.size, T = batch.tgt_len, V = model.target_vocab();
  const int S = model.memory_rows() ? model.memory_rows() : batch.src_len;
  Tensor expected, expected_attention;
  {
    NoGradGuard no_grad;
    expected = model.forward(batch).value();      // [B, T, V]
    expected_attention = model.last_attention();  // [B, T, S]
  }
  REQUIRE(expected_attention.shape() == Shape{B, T, S});
  auto state = model.start(model.encode(batch));
  float worst_logit = 0, worst_attention = 0;
  for (int t = 0; t < T; ++t) {
    std::vector<int32_t> previous(B);
    for (int b = 0; b < B; ++b) previous[b] = batch.tgt_in[b * T + t];
    StepOutput out = model.step(*state, previous);
    REQUIRE(out.logits.shape() == Shape{B, V});
    REQUIRE(out.attention.shape() == Shape{B, S});
    for (int b = 0; b < B; ++b) {
      worst_logit = std::max(worst_logit, max_diff(out.logits.data() + b * V, expected.data() + (b * T + t) * V, V));
      worst_attention = std::max(
          worst_attention, max_diff(out.attention.data() + b * S, expected_attention.data() + (b * T + t) * S, S));
      if (!model.memory_rows())
        for (int j = batch.src_lengths[b]; j < S; ++j) CHECK(out.attention.data()[b * S + j] == 0.f);
    }
  }
  INFO("max |step − forward|: logits " << worst_logit << ", attention " << worst_attention);
  CHECK(worst_logit <= logit_tolerance);
  CHECK(worst_attention <= attention_tolerance);
}

// After 18 steps, reorder to `rows` (a row dropped, one repeated: new row i = old rows[i]) and
// step on: the results equal those of the reordered sentences decoded as their own batch from the
// start, and repeated rows give identical results.
inline void reorder_follows_rows(Seq2Seq& model, const Batch& batch) {
  model.set_training(false);
  const int B = batch.size, V = model.target_vocab();
  const std::vector<int32_t> rows = {2, 0, 2, 2};
  std::vector<std::vector<int32_t>> src, tgt;
  for (int32_t r : rows) {
    auto s = batch.src.begin() + r * batch.src_len;
    auto t = batch.tgt_out.begin() + r * batch.tgt_len;
    src.emplace_back(s, s + batch.src_lengths[r] - 1);
    tgt.emplace_back(t, t + batch.tgt_lengths[r] - 1);
  }
  Batch reordered = make_batch(src, tgt);
  auto ref_state = model.start(model.encode(reordered));
  auto state = model.start(model.encode(batch));
  auto token = [](int t, int row) { return static_cast<int32_t>(t == 0 ? 2 : 4 + (t * 5 + row) % 20); };
  const int before = 18, after = 5;
  for (int t = 0; t < before; ++t) {
    std::vector<int32_t> prev(B), ref_prev;
    for (int b = 0; b < B; ++b) prev[b] = token(t, b);
    for (int32_t r : rows) ref_prev.push_back(token(t, r));
    model.step(*state, prev);
    model.step(*ref_state, ref_prev);
  }
  model.reorder(*state, rows);
  REQUIRE(state->rows == 4);
  for (int t = before; t < before + after; ++t) {
    std::vector<int32_t> prev;
    for (int32_t r : rows) prev.push_back(token(t, r));
    StepOutput got = model.step(*state, prev);
    StepOutput want = model.step(*ref_state, prev);
    REQUIRE(got.logits.shape() == Shape{4, V});
    CHECK(max_diff(got.logits.data(), want.logits.data(), 4 * V) <= 1e-4f);
    // The reordered batch pads its sources differently: compare the real positions (or all the
    // memory rows).
    const int memory = model.memory_rows();
    for (int i = 0; i < 4; ++i)
      CHECK(max_diff(got.attention.data() + i * got.attention.dim(1), want.attention.data() + i * want.attention.dim(1),
                     memory ? memory : batch.src_lengths[rows[i]]) <= 1e-5f);
    CHECK(max_diff(got.logits.data(), got.logits.data() + 2 * V, V) == 0.f);
    CHECK(max_diff(got.logits.data(), got.logits.data() + 3 * V, V) == 0.f);
  }
}

// Logits of the first three teacher-forced steps, all rows, one vector.
inline std::vector<float> first_steps(Seq2Seq& model, const Batch& batch) {
  auto state = model.start(model.encode(batch));
  std::vector<float> out;
  for (int t = 0; t < 3; ++t) {
    std::vector<int32_t> previous(batch.size);
    for (int b = 0; b < batch.size; ++b) previous[b] = batch.tgt_in[b * batch.tgt_len + t];
    const std::vector<float> logits = model.step(*state, previous).logits.to_vector();
    out.insert(out.end(), logits.begin(), logits.end());
  }
  return out;
}

// While StepWeightsHold is open, batches give bitwise the results of weights prepared per batch;
// once it closes, changed parameters are used (no stale copy survives the hold).
inline void held_weights_match(Seq2Seq& model, const Batch& batch) {
  model.set_training(false);
  NoGradGuard no_grad;
  const std::vector<float> per_batch = first_steps(model, batch);
  {
    StepWeightsHold hold(model);
    CHECK(first_steps(model, batch) == per_batch);
    CHECK(first_steps(model, batch) == per_batch);  // the held copy serves every batch
  }
  for (const auto& [name, p] : model.parameters().all()) scale_into(p.value(), 0.5f);
  const std::vector<float> changed = first_steps(model, batch);
  CHECK(changed != per_batch);
  StepWeightsHold hold(model);  // prepared from the changed parameters
  CHECK(first_steps(model, batch) == changed);
}

}  // namespace heed::step_checks
