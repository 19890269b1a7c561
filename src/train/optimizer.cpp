#include "train/optimizer.hpp"

#include <cmath>

#include "util/error.hpp"

namespace heed {

Adam::Adam(const ParameterSet& params, const TrainingConfig& training) : o_(training) {
  for (const auto& [name, var] : params.all()) {
    params_.push_back(var);
    m_.push_back(Tensor::zeros(var.shape()));
    v_.push_back(Tensor::zeros(var.shape()));
  }
}

namespace {
struct AdamConstants {
  float b1, b2, eps, step_size, inv_sqrt_bc2;
  float l2;     // coupled weight decay: added to the gradient
  float decay;  // decoupled weight decay (AdamW): lr · wd, taken from the parameter
};

// One parameter tensor. kHasGrad is a template argument, not a branch in the loop: GCC does not
// vectorise a loop that may or may not load the gradient, and scalar sqrt and division made this
// loop slower than its memory traffic.
template <bool kHasGrad>
void adam_update(float* p, float* m, float* v, const float* g, float grad_scale, int64_t n, const AdamConstants& c) {
#pragma omp parallel for simd schedule(static) if (n > 65536)
  for (int64_t j = 0; j < n; ++j) {
    float gj = kHasGrad ? g[j] * grad_scale : 0.f;
    p[j] -= c.decay * p[j];
    gj += c.l2 * p[j];
    m[j] = c.b1 * m[j] + (1.f - c.b1) * gj;
    v[j] = c.b2 * v[j] + (1.f - c.b2) * gj * gj;
    p[j] -= c.step_size * m[j] / (std::sqrt(v[j]) * c.inv_sqrt_bc2 + c.eps);
  }
}
}  // namespace

void Adam::step(float lr, float grad_scale) {
  ++steps_;
  const float bc1 = 1.f - std::pow(o_.beta1, static_cast<float>(steps_));
  const float bc2 = 1.f - std::pow(o_.beta2, static_cast<float>(steps_));
  // With no weight decay, both decay terms are 0 and leave p and the gradient unchanged.
  const bool decoupled = o_.optimizer == OptimizerKind::adamw;
  const AdamConstants c{o_.beta1,
                        o_.beta2,
                        o_.eps,
                        lr / bc1,
                        1.f / std::sqrt(bc2),
                        decoupled ? 0.f : o_.weight_decay,
                        decoupled ? lr * o_.weight_decay : 0.f};
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& g = params_[i].grad();
    float* p = params_[i].value().data();
    const int64_t n = params_[i].value().numel();
    if (g.defined())
      adam_update<true>(p, m_[i].data(), v_[i].data(), g.data(), grad_scale, n, c);
    else
      adam_update<false>(p, m_[i].data(), v_[i].data(), nullptr, grad_scale, n, c);
  }
}

void Adam::set_state(int64_t steps, const std::vector<Tensor>& m, const std::vector<Tensor>& v) {
  if (m.size() != m_.size() || v.size() != v_.size()) throw Error("optimizer state does not match the model");
  for (size_t i = 0; i < m_.size(); ++i) {
    m_[i].copy_from(m[i]);
    v_[i].copy_from(v[i]);
  }
  steps_ = steps;
}

double global_grad_norm(const ParameterSet& params) {
  double total = 0;
  for (const auto& [name, var] : params.all()) {
    const Tensor& g = var.grad();
    if (!g.defined()) continue;
    const float* p = g.data();
    double s = 0;
    const int64_t n = g.numel();
    // simd: without it the double sum is one serial dependency chain, several times slower than
    // reading the gradient.
#pragma omp parallel for simd reduction(+ : s) schedule(static) if (n > 65536)
    for (int64_t j = 0; j < n; ++j) s += static_cast<double>(p[j]) * p[j];
    total += s;
  }
  return std::sqrt(total);
}

float clip_factor(double norm, float max_norm) {
  const double factor = max_norm / (norm + 1e-6);
  return factor >= 1.0 ? 1.f : static_cast<float>(factor);
}

}  // namespace heed
