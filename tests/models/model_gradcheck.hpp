// Finite-difference check of every parameter gradient of a whole tiny model (both architectures).
//
// L = Σ_k w_k·logits_k with fixed random weights w ~ U(−1, 1) (every output weighted differently),
// accumulated in double; the model runs in float32 as in training. Numeric gradient: central
// differences D(h) = (L(θ+h) − L(θ−h)) / (θ₊ − θ₋) over the perturbed values as stored in float,
// combined as (4·D(h) − D(2h)) / 3 (Richardson), which cancels the h² truncation term: plain
// central differences missed by ~2 % on the target embedding, whose perturbations pass through
// √d scaling and LayerNorms of width 4. h = 2e-2 balances the remaining truncation against float32
// rounding of the logits, which adds ~2e-5 absolute to each quotient.
// GELU, because ReLU's kink makes a difference quotient wrong wherever a pre-activation lies
// within h of 0 (ReLU itself is checked by the golden test and by the op's own gradient check).
// Tolerance: |analytic − numeric| ≤ 1e-2 · max(|numeric|, 0.1·max over the tensor, 0.01·max over
// the model) per element. The first floor compares tiny entries at their tensor's scale; the
// second keeps whole tensors with tiny gradients (pre-norm cross-attention LayerNorms, ~1e-3
// against a model maximum of ~1) from being judged on rounding noise alone. Measured worst
// scaled errors: 3.1e-3 (post-norm), 1.4e-3 (pre-norm); a missing term, wrong transpose or mask
// gives errors of order 1.
#pragma once
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "models/seq2seq.hpp"
#include "tensor/ops.hpp"

namespace heed::gradcheck {
constexpr double kStep = 2e-2;

inline double weighted_logits(Seq2Seq& model, const Batch& batch, const Tensor& w) {
  Tensor logits = model.forward(batch).value();
  double acc = 0;
  for (int64_t k = 0; k < logits.numel(); ++k) acc += static_cast<double>(w.data()[k]) * logits.data()[k];
  return acc;
}

// (L(θ+h) − L(θ−h)) / (θ₊ − θ₋), θ₊ and θ₋ as stored in float.
inline double central_difference(Seq2Seq& model, const Batch& batch, const Tensor& w, float* theta, double h) {
  const float saved = *theta;
  *theta = static_cast<float>(saved + h);
  const double xp = *theta, lp = weighted_logits(model, batch, w);
  *theta = static_cast<float>(saved - h);
  const double xm = *theta, lm = weighted_logits(model, batch, w);
  *theta = saved;
  return (lp - lm) / (xp - xm);
}

// Checks every parameter's gradient of `model` on `batch`; returns the worst scaled error.
inline double check_model_gradients(Seq2Seq& model, const Batch& batch) {
  model.set_training(true);
  Tensor logits = model.forward(batch).value();
  Tensor w = Tensor::empty(logits.shape());
  Rng rng(99);
  rng.fill_uniform(w, -1.f, 1.f);
  clear_tape();
  model.parameters().zero_grad();
  backward(sum(mul(model.forward(batch), Var(w))));

  NoGradGuard no_grad;
  std::vector<std::vector<double>> numeric;
  double model_scale = 0;
  for (const auto& [name, var] : model.parameters().all()) {
    std::vector<double> d(var.value().numel());
    for (size_t j = 0; j < d.size(); ++j) {
      float* theta = var.value().data() + j;
      d[j] = (4 * central_difference(model, batch, w, theta, kStep) -
              central_difference(model, batch, w, theta, 2 * kStep)) /
             3;
      model_scale = std::max(model_scale, std::fabs(d[j]));
    }
    numeric.push_back(std::move(d));
  }
  double worst = 0;
  for (size_t p = 0; p < numeric.size(); ++p) {
    const auto& [name, var] = model.parameters().all()[p];
    const auto& d = numeric[p];
    double scale = 0;
    for (double v : d) scale = std::max(scale, std::fabs(v));
    REQUIRE(var.grad().defined());
    for (size_t j = 0; j < d.size(); ++j) {
      const double analytic = var.grad().data()[j];
      const double err = std::fabs(analytic - d[j]) / std::max({std::fabs(d[j]), 0.1 * scale, 1e-2 * model_scale});
      worst = std::max(worst, err);
      INFO(name << " element " << j << " analytic " << analytic << " numeric " << d[j] << " (tensor max " << scale
                << ", model max " << model_scale << ")");
      REQUIRE(err <= 1e-2);
    }
  }
  return worst;
}

}  // namespace heed::gradcheck
