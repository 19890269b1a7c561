#include "train/optimizer.hpp"

#include <cmath>

#include "util/error.hpp"

namespace heed {

Adam::Adam(const ParameterSet& params, AdamOptions options) : o_(options) {
  for (const auto& [name, var] : params.all()) {
    params_.push_back(var);
    m_.push_back(Tensor::zeros(var.shape()));
    v_.push_back(Tensor::zeros(var.shape()));
  }
}

void Adam::step(float lr, float grad_scale) {
  ++steps_;
  const float bc1 = 1.f - std::pow(o_.beta1, static_cast<float>(steps_));
  const float bc2 = 1.f - std::pow(o_.beta2, static_cast<float>(steps_));
  const float step_size = lr / bc1, inv_sqrt_bc2 = 1.f / std::sqrt(bc2);
  const float b1 = o_.beta1, b2 = o_.beta2, eps = o_.eps, wd = o_.weight_decay;
  const bool decoupled = o_.decoupled;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& g = params_[i].grad();
    float* p = params_[i].value().data();
    float* m = m_[i].data();
    float* v = v_[i].data();
    const float* pg = g.defined() ? g.data() : nullptr;
    const int64_t n = params_[i].value().numel();
#pragma omp parallel for simd schedule(static) if (n > 65536)
    for (int64_t j = 0; j < n; ++j) {
      float gj = pg ? pg[j] * grad_scale : 0.f;
      if (decoupled)
        p[j] -= lr * wd * p[j];
      else
        gj += wd * p[j];
      m[j] = b1 * m[j] + (1.f - b1) * gj;
      v[j] = b2 * v[j] + (1.f - b2) * gj * gj;
      p[j] -= step_size * m[j] / (std::sqrt(v[j]) * inv_sqrt_bc2 + eps);
    }
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
#pragma omp parallel for reduction(+ : s) schedule(static) if (n > 65536)
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
