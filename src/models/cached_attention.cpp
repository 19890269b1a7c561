#include "models/cached_attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tensor/fast_math.hpp"
#include "util/error.hpp"

namespace heed {

void cached_attention(const float* q, int64_t q_stride, int64_t N, int64_t heads, int64_t head_dim,
                      const AttentionMemory& memory, const float* key_pad, float* out, float* mean_probs) {
  const int64_t len = memory.len, dh = head_dim;
  if (len < 1 || heads < 1 || dh < 1 || memory.row_stride < heads * dh || !memory.keys || !memory.values ||
      !memory.rows)
    throw Error("cached_attention: " + std::to_string(len) + " positions, " + std::to_string(heads) + " heads of " +
                std::to_string(dh) + ", row stride " + std::to_string(memory.row_stride));
  const float inv_sqrt_dh = 1.f / std::sqrt(static_cast<float>(dh));
  if (mean_probs) std::fill(mean_probs, mean_probs + N * len, 0.f);
#pragma omp parallel if (N * heads * len * dh > (1 << 16))
  {
    std::vector<float> scaled(dh), p(len);
    std::vector<const float*> K(len), V(len);
#pragma omp for schedule(static)
    for (int64_t n = 0; n < N; ++n) {
      const float* pad = key_pad ? key_pad + n * len : nullptr;
      for (int64_t j = 0; j < len; ++j) {
        const int64_t offset = memory.rows[n * len + j] * memory.row_stride;
        K[j] = memory.keys[j] + offset;
        V[j] = memory.values[j] + offset;
      }
      for (int64_t k = 0; k < heads; ++k) {
        const float* qk = q + n * q_stride + k * dh;
        for (int64_t i = 0; i < dh; ++i) scaled[i] = qk[i] * inv_sqrt_dh;
        float top = -std::numeric_limits<float>::infinity();
        for (int64_t j = 0; j < len; ++j) {
          const float* key = K[j] + k * dh;
          float s = 0;
#pragma omp simd reduction(+ : s)
          for (int64_t i = 0; i < dh; ++i) s += scaled[i] * key[i];
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
          const float* value = V[j] + k * dh;
#pragma omp simd
          for (int64_t i = 0; i < dh; ++i) o[i] += w * value[i];
        }
      }
    }
  }
}

}  // namespace heed
