#include "tensor/random.hpp"

#include <cmath>

namespace heed {

float Rng::normal(float mean, float stddev) {
  float u1 = uniform(), u2 = uniform();
  if (u1 < 1e-12f) u1 = 1e-12f;
  return mean + stddev * std::sqrt(-2.f * std::log(u1)) * std::cos(6.28318530718f * u2);
}

void Rng::fill_uniform(const Tensor& t, float lo, float hi) {
  float* p = t.data();
  for (int64_t i = 0, n = t.numel(); i < n; ++i) p[i] = uniform(lo, hi);
}

void Rng::fill_normal(const Tensor& t, float mean, float stddev) {
  float* p = t.data();
  for (int64_t i = 0, n = t.numel(); i < n; ++i) p[i] = normal(mean, stddev);
}

}  // namespace heed
