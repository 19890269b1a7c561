#include "models/cached_attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "tensor/ops/fast_math.hpp"
#include "util/error.hpp"

namespace heed {

void cached_attention(const float* q, int64_t q_stride, int64_t N, const int32_t* kv_row, const Tensor& keys,
                      const Tensor& values, int64_t len, const float* key_pad, float* out, float* mean_probs) {
  if (keys.ndim() != 4 || keys.shape() != values.shape() || !keys.is_contiguous() || !values.is_contiguous())
    throw Error("cached_attention: keys " + shape_str(keys.shape()) + ", values " + shape_str(values.shape()));
  const int64_t M = keys.dim(0), heads = keys.dim(1), capacity = keys.dim(2), dh = keys.dim(3);
  if (len < 1 || len > capacity) throw Error("cached_attention: " + std::to_string(len) + " positions in a cache of " + std::to_string(capacity));
  for (int64_t n = 0; n < N; ++n) {
    const int64_t m = kv_row ? kv_row[n] : n;
    if (m < 0 || m >= M) throw Error("cached_attention: row " + std::to_string(n) + " reads cache row " + std::to_string(m) + " of " + std::to_string(M));
  }
  const float inv_sqrt_dh = 1.f / std::sqrt(static_cast<float>(dh));
  if (mean_probs) std::fill(mean_probs, mean_probs + N * len, 0.f);
#pragma omp parallel if (N * heads * len * dh > (1 << 16))
  {
    std::vector<float> scaled(dh), p(len);
#pragma omp for schedule(static)
    for (int64_t n = 0; n < N; ++n) {
      const int64_t m = kv_row ? kv_row[n] : n;
      const float* pad = key_pad ? key_pad + m * len : nullptr;
      for (int64_t k = 0; k < heads; ++k) {
        const float* qk = q + n * q_stride + k * dh;
        for (int64_t i = 0; i < dh; ++i) scaled[i] = qk[i] * inv_sqrt_dh;
        const float* K = keys.data() + ((m * heads + k) * capacity) * dh;
        const float* V = values.data() + ((m * heads + k) * capacity) * dh;
        float top = -std::numeric_limits<float>::infinity();
        for (int64_t j = 0; j < len; ++j) {
          float s = 0;
#pragma omp simd reduction(+ : s)
          for (int64_t i = 0; i < dh; ++i) s += scaled[i] * K[j * dh + i];
          p[j] = s;
          if (!(pad && pad[j] != 0.f)) top = std::max(top, s);
        }
        float total = 0;
#pragma omp simd reduction(+ : total)
        for (int64_t j = 0; j < len; ++j) {
          p[j] = pad && pad[j] != 0.f ? 0.f : fast_exp(p[j] - top);
          total += p[j];
        }
        const float inv_total = 1.f / total;
        float* o = out + n * heads * dh + k * dh;
        std::fill(o, o + dh, 0.f);
        for (int64_t j = 0; j < len; ++j) {
          const float w = p[j] * inv_total;
          if (mean_probs) mean_probs[n * len + j] += w / static_cast<float>(heads);
          if (w == 0.f) continue;
#pragma omp simd
          for (int64_t i = 0; i < dh; ++i) o[i] += w * V[j * dh + i];
        }
      }
    }
  }
}

}  // namespace heed
