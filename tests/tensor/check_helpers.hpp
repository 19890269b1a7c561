#pragma once
// Shared helpers of the tensor tests: seeded random tensors and the finite-difference gradient
// check.
//
// Gradient check. The loss is L = Σ_k w_k·out_k with fixed random weights w ~ U(-1, 1), so every
// output element (and every path through the op) is weighted differently. The analytic gradient
// comes from backward(sum(mul(out, w))), i.e. the op's backward seeded with exactly w. The numeric
// one is the central difference (L(x+h) − L(x−h)) / (x₊ − x₋), where the ops run in float32 as in
// production but L is accumulated in double, and the divisor is the difference of the two
// perturbed inputs *as stored in float* (so rounding of x ± h does not bias the quotient).
//
// Step h = 1e-2 (inputs are O(1)): the central difference's truncation error is h²/6·|f'''|
// ≈ 2e-5 relative for our smooth ops, while float32 rounding of the K outputs adds noise of about
// 2⁻²⁴·√K·|w||out| / (2h) ≈ 3e-6·√K to the quotient (≈ 1e-4 for K ≈ 1000). A smaller h would
// let the float32 noise dominate, a larger one the truncation error.
//
// Tolerance: |analytic − numeric| ≤ 1e-2 · max(|numeric|, 0.1·max_j |numeric_j|) per element.
// The floor 0.1·max over the tensor compares tiny entries (where a relative error means nothing)
// at the tensor's own scale. 1e-2 is ~50× above the error budget above (measured maxima are
// printed by the tests and stay below 2e-3), yet any real backward bug (a missing term, a wrong
// transpose, a dropped batch) gives errors of order 1.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "tensor/autograd.hpp"
#include "tensor/ops.hpp"
#include "tensor/random.hpp"

namespace heed::test {

inline constexpr double kGradStep = 1e-2;
inline constexpr double kGradTolerance = 1e-2;

inline Tensor random_tensor(const Shape& shape, uint64_t seed, float lo = -1.f, float hi = 1.f) {
  Tensor t = Tensor::empty(shape);
  Rng rng(seed);
  rng.fill_uniform(t, lo, hi);
  return t;
}

using OpFn = std::function<Var(const std::vector<Var>&)>;

// Σ_k w_k·out_k in double.
inline double weighted_sum(const Tensor& out, const Tensor& w) {
  Tensor o = out.contiguous();
  double acc = 0;
  for (int64_t k = 0; k < o.numel(); ++k) acc += static_cast<double>(w.data()[k]) * o.data()[k];
  return acc;
}

// Checks every input's gradient; returns the largest scaled error seen (for reporting).
inline double check_gradients(const std::string& name, const OpFn& f, const std::vector<Tensor>& inputs,
                              uint64_t weight_seed = 99) {
  std::vector<Var> vars;
  for (const auto& t : inputs) vars.emplace_back(t.clone(), true);
  Var out = f(vars);
  Tensor w = random_tensor(out.shape(), weight_seed);
  backward(sum(mul(out, Var(w))));
  REQUIRE(tape_size() == 0);

  double worst = 0;
  NoGradGuard no_grad;
  for (size_t i = 0; i < vars.size(); ++i) {
    const Tensor& x = vars[i].value();
    const int64_t n = x.numel();
    std::vector<double> numeric(n);
    for (int64_t j = 0; j < n; ++j) {
      const float saved = x.data()[j];
      x.data()[j] = static_cast<float>(saved + kGradStep);
      const double xp = x.data()[j];
      const double lp = weighted_sum(f(vars).value(), w);
      x.data()[j] = static_cast<float>(saved - kGradStep);
      const double xm = x.data()[j];
      const double lm = weighted_sum(f(vars).value(), w);
      x.data()[j] = saved;
      numeric[j] = (lp - lm) / (xp - xm);
    }
    double scale = 0;
    for (double v : numeric) scale = std::max(scale, std::fabs(v));
    const Tensor g = vars[i].grad();
    for (int64_t j = 0; j < n; ++j) {
      const double analytic = g.defined() ? g.data()[j] : 0.0;
      const double denom = std::max({std::fabs(numeric[j]), 0.1 * scale, 1e-6});
      const double err = std::fabs(analytic - numeric[j]) / denom;
      worst = std::max(worst, err);
      if (err > kGradTolerance) {
        INFO(name << ": input " << i << " element " << j << " analytic " << analytic << " numeric " << numeric[j]);
        CHECK(err <= kGradTolerance);
        return worst;
      }
    }
  }
  std::printf("gradcheck %-40s max scaled error %.2e\n", name.c_str(), worst);
  return worst;
}

}  // namespace heed::test
