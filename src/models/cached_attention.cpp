#include "models/cached_attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "util/error.hpp"

namespace heed {

void cached_attention(const float* q, int64_t q_stride, const Tensor& keys, const Tensor& values, int64_t len,
                      const float* key_pad, float* out, float* mean_probs) {
  if (keys.ndim() != 4 || keys.shape() != values.shape() || !keys.is_contiguous() || !values.is_contiguous())
    throw Error("cached_attention: keys " + shape_str(keys.shape()) + ", values " + shape_str(values.shape()));
  const int64_t rows = keys.dim(0), heads = keys.dim(1), capacity = keys.dim(2), dh = keys.dim(3);
  if (len < 1 || len > capacity) throw Error("cached_attention: " + std::to_string(len) + " positions in a cache of " + std::to_string(capacity));
  const float inv_sqrt_dh = 1.f / std::sqrt(static_cast<float>(dh));
  if (mean_probs) std::fill(mean_probs, mean_probs + rows * len, 0.f);
#pragma omp parallel for schedule(static) if (rows * heads * len * dh > (1 << 16))
  for (int64_t n = 0; n < rows; ++n) {
    std::vector<float> scaled(dh), p(len);
    const float* pad = key_pad ? key_pad + n * len : nullptr;
    for (int64_t k = 0; k < heads; ++k) {
      const float* qk = q + n * q_stride + k * dh;
      for (int64_t i = 0; i < dh; ++i) scaled[i] = qk[i] * inv_sqrt_dh;
      const float* K = keys.data() + ((n * heads + k) * capacity) * dh;
      const float* V = values.data() + ((n * heads + k) * capacity) * dh;
      float top = -std::numeric_limits<float>::infinity();
      for (int64_t j = 0; j < len; ++j) {
        if (pad && pad[j] != 0.f) {
          p[j] = -std::numeric_limits<float>::infinity();
          continue;
        }
        float s = 0;
#pragma omp simd reduction(+ : s)
        for (int64_t i = 0; i < dh; ++i) s += scaled[i] * K[j * dh + i];
        p[j] = s;
        top = std::max(top, s);
      }
      float total = 0;
      for (int64_t j = 0; j < len; ++j) {
        p[j] = std::isinf(p[j]) && p[j] < 0 ? 0.f : std::exp(p[j] - top);
        total += p[j];
      }
      float* o = out + n * heads * dh + k * dh;
      std::fill(o, o + dh, 0.f);
      for (int64_t j = 0; j < len; ++j) {
        const float w = p[j] / total;
        if (mean_probs) mean_probs[n * len + j] += w / static_cast<float>(heads);
        if (w == 0.f) continue;
#pragma omp simd
        for (int64_t i = 0; i < dh; ++i) o[i] += w * V[j * dh + i];
      }
    }
  }
}

}  // namespace heed
