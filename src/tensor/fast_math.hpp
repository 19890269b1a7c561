#pragma once
// exp, sigmoid and tanh written with plain float arithmetic so that `#pragma omp simd` loops
// vectorise them (glibc's vector expf is only offered under -ffast-math). exp: range reduction
// by ln 2 and a degree-6 polynomial, about 2 ulp on [-87, 88]; inputs beyond saturate. And a
// row maximum that vectorises.
#include <cmath>
#include <cstdint>
#include <cstring>

namespace heed {

#pragma omp declare simd
inline float fast_exp(float x) {
  // Comparisons rather than fmin/fmax: those return the other operand for a NaN, which would
  // turn a NaN logit into a finite loss and hide a diverged model.
  x = x < -87.3f ? -87.3f : x > 88.3f ? 88.3f : x;
  const float n = std::nearbyint(x * 1.44269504088896341f);
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

#pragma omp declare simd
inline float fast_sigmoid(float x) { return 1.f / (1.f + fast_exp(-x)); }

#pragma omp declare simd
inline float fast_tanh(float x) {
  // tanh(x) = sign(x)·(1 − 2/(e^{2|x|} + 1)); for small |x| the odd series avoids cancellation.
  const float ax = std::fabs(x);
  const float big = 1.f - 2.f / (fast_exp(2.f * ax) + 1.f);
  const float x2 = x * x;
  const float small = ax * (1.f + x2 * (-0.333333333f + x2 * (0.133333333f + x2 * -0.0539682540f)));
  const float t = ax < 0.125f ? small : big;
  return std::copysign(t, x);
}

// max(x[0], ..., x[n-1]), −inf for n = 0; NaNs are passed over (a NaN logit still reaches the
// loss through the sums). Written as 64 running lanes: GCC leaves a float max reduction,
// `omp simd reduction(max)` included, as a scalar chain of vmaxss without -ffinite-math-only.
inline float max_of(const float* x, int64_t n) {
  constexpr int64_t kLanes = 64;
  float lane[kLanes];
  for (int64_t i = 0; i < kLanes; ++i) lane[i] = -INFINITY;
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes)
    for (int64_t i = 0; i < kLanes; ++i) lane[i] = x[k + i] > lane[i] ? x[k + i] : lane[i];
  // Halving folds vectorise too; a scalar pass over the 64 lanes cost as much as a 64-wide chunk.
  for (int64_t width = kLanes / 2; width >= 1; width /= 2)
    for (int64_t i = 0; i < width; ++i) lane[i] = lane[i + width] > lane[i] ? lane[i + width] : lane[i];
  float top = lane[0];
  for (; k < n; ++k) top = x[k] > top ? x[k] : top;
  return top;
}

}  // namespace heed
