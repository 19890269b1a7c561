// Whole-model gradients in bf16 against fp32, both architectures: the same batch and weights,
// L = Σ w_k · logits_k with fixed random w, every parameter's gradient compared as a whole by
// e = ‖g_bf16 − g_fp32‖ / ‖g_fp32‖.
// How large may e be? The yardstick is the model's own sensitivity: the same fp32 model with
// only its weights rounded to bf16 (a perturbation of 2⁻⁹ relative) moves its gradients by e_w.
// Measured worst over the tensors: GRU e 1.0 %; Transformer e 5.5 % against e_w 5.8 % (ReLU
// units whose pre-activation changes sign, and the random-signed L, whose gradient terms cancel,
// amplify any perturbation). The checks: every tensor e ≤ 10 %, and the model's worst e ≤ 2 ×
// its worst e_w; a wrong transpose, a missing term or a wrong operand gives e of order 100 %.
// Also: the logits differ from fp32 (the bf16 path ran) by at most 5 % of their scale.
// Skipped on a CPU without bf16 (catch_main.cpp).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

#include "models/gru_bahdanau.hpp"
#include "models/transformer.hpp"
#include "tensor/precision.hpp"
#include "tokens/batch.hpp"

using namespace heed;

namespace {
Batch random_batch(int vocab, uint32_t seed) {
  Rng rng(seed);
  std::vector<std::vector<int32_t>> src, tgt;
  for (int s = 0; s < 6; ++s) {
    std::vector<int32_t> a, b;
    const int sl = 3 + s * 2, tl = 4 + s;
    for (int i = 0; i < sl; ++i) a.push_back(4 + static_cast<int32_t>((rng.next_u64() % (vocab - 4))));
    for (int i = 0; i < tl; ++i) b.push_back(4 + static_cast<int32_t>((rng.next_u64() % (vocab - 4))));
    src.push_back(a);
    tgt.push_back(b);
  }
  return make_batch(src, tgt);
}

struct Run {
  Tensor logits;
  std::vector<Tensor> grads;
};

Run run(Seq2Seq& model, const Batch& batch, MatmulPrecision precision) {
  ScopedMatmulPrecision scope(precision);
  model.set_training(true);
  clear_tape();
  model.parameters().zero_grad();
  Var logits = model.forward(batch);
  Tensor w = Tensor::empty(logits.shape());
  Rng rng(99);
  rng.fill_uniform(w, -1.f, 1.f);
  backward(sum(mul(logits, Var(w))));
  Run r{logits.value().clone(), {}};
  for (const auto& [name, var] : model.parameters().all()) r.grads.push_back(var.grad().clone());
  return r;
}

void compare(Seq2Seq& model, const Batch& batch, const char* what) {
  const Run r32 = run(model, batch, MatmulPrecision::fp32), r16 = run(model, batch, MatmulPrecision::bf16);
  // the yardstick: fp32 with the weights rounded to bf16
  std::vector<Tensor> saved;
  for (const auto& [name, var] : model.parameters().all()) {
    saved.push_back(var.value().clone());
    std::vector<uint16_t> bits(static_cast<size_t>(var.value().numel()));
    round_to_bf16(var.value().data(), var.value().numel(), bits.data());
    for (int64_t i = 0; i < var.value().numel(); ++i) var.value().data()[i] = bf16_to_float(bits[i]);
  }
  const Run rounded = run(model, batch, MatmulPrecision::fp32);
  for (size_t i = 0; i < saved.size(); ++i) model.parameters().all()[i].second.value().copy_from(saved[i]);
  double logit_diff = 0, logit_scale = 0;
  for (int64_t i = 0; i < r32.logits.numel(); ++i) {
    logit_diff = std::max(logit_diff, std::fabs(double(r16.logits.data()[i]) - r32.logits.data()[i]));
    logit_scale = std::max(logit_scale, std::fabs(double(r32.logits.data()[i])));
  }
  CHECK(logit_diff > 0);
  CHECK(logit_diff <= 0.05 * logit_scale);
  const auto relative = [&](const Run& r, size_t p) {
    double diff = 0, norm = 0;
    for (int64_t i = 0; i < r32.grads[p].numel(); ++i) {
      const double a = r.grads[p].data()[i], b = r32.grads[p].data()[i];
      diff += (a - b) * (a - b);
      norm += b * b;
    }
    return norm > 0 ? std::sqrt(diff / norm) : 0.0;
  };
  double worst = 0, worst_rounded = 0;
  for (size_t p = 0; p < r32.grads.size(); ++p) {
    const double e = relative(r16, p), e_w = relative(rounded, p);
    INFO(what << " " << model.parameters().all()[p].first << ": relative gradient error " << e << ", weights rounded "
              << e_w);
    CHECK(e <= 0.10);
    worst = std::max(worst, e);
    worst_rounded = std::max(worst_rounded, e_w);
  }
  CHECK(worst <= 2 * worst_rounded);
  std::printf("%s: bf16 logits within %.2e of fp32 (scale %.2f), worst relative gradient error %.2e "
              "(fp32 with bf16-rounded weights: %.2e)\n",
              what, logit_diff, logit_scale, worst, worst_rounded);
}
}  // namespace

TEST_CASE("GRU-Bahdanau: bf16 gradients as close to fp32 as rounding the weights allows", "[bf16][gru]") {
  ModelConfig c;
  c.dropout = 0;
  c.gru.emb_dim = 32;
  c.gru.enc_hidden = 48;
  c.gru.dec_hidden = 48;
  c.gru.attn_dim = 40;
  c.gru.readout_dim = 32;
  auto model = make_gru_bahdanau(c, 60, 60, 3);
  compare(*model, random_batch(60, 5), "gru");
}

TEST_CASE("Transformer: bf16 gradients as close to fp32 as rounding the weights allows", "[bf16][transformer]") {
  ModelConfig c;
  c.arch = Arch::transformer;
  c.dropout = 0;
  c.transformer.d_model = 64;
  c.transformer.heads = 4;
  c.transformer.ffn_dim = 128;
  c.transformer.enc_layers = 2;
  c.transformer.dec_layers = 2;
  auto model = make_transformer(c, 60, 60, 5);
  compare(*model, random_batch(60, 7), "transformer");
}
