#include "models/additive_attention_step.hpp"

#include <algorithm>
#include <string>

#include "tensor/ops/fast_math.hpp"
#include "util/error.hpp"

namespace heed {

void additive_attention_step(const Tensor& query, const Tensor& keys, const Tensor& v, const Tensor& values,
                             const Tensor& key_pad, const std::vector<int32_t>& source_row, Tensor& alpha,
                             const Tensor& context) {
  const int64_t N = query.dim(0), A = query.dim(1), B = keys.dim(0), S = keys.dim(1), Dv = values.dim(2);
  if (keys.dim(2) != A || v.numel() != A || values.dim(0) != B || values.dim(1) != S || key_pad.dim(0) != B ||
      key_pad.dim(1) != S || static_cast<int64_t>(source_row.size()) != N || query.strides()[1] != 1 ||
      context.ndim() != 2 || context.dim(0) != N || context.dim(1) != Dv || !context.is_contiguous() ||
      !keys.is_contiguous() || !v.is_contiguous() || !values.is_contiguous() || !key_pad.is_contiguous())
    throw Error("additive_attention_step: query " + shape_str(query.shape()) + ", keys " + shape_str(keys.shape()) +
                ", values " + shape_str(values.shape()) + ", context " + shape_str(context.shape()) + ", " +
                std::to_string(source_row.size()) + " source rows");
  for (int32_t b : source_row)
    if (b < 0 || b >= B) throw Error("additive_attention_step: source row " + std::to_string(b) + " of " + std::to_string(B));
  alpha = Tensor::empty({N, S});
  const float* pq = query.data();
  const int64_t q_stride = query.strides()[0];
  const float* pk = keys.data();
  const float* pv = v.data();
  const float* ph = values.data();
  const float* pad_all = key_pad.data();
#pragma omp parallel for schedule(static) if (N * S * A > 65536)
  for (int64_t n = 0; n < N; ++n) {
    const int64_t b = source_row[n];
    const float* q = pq + n * q_stride;
    const float* pad = pad_all + b * S;
    float* p = alpha.data() + n * S;
    float top = -1e30f;
    for (int64_t j = 0; j < S; ++j) {
      if (pad[j] != 0.f) continue;
      const float* k = pk + (b * S + j) * A;
      float e = 0;
#pragma omp simd reduction(+ : e)
      for (int64_t a = 0; a < A; ++a) e += pv[a] * fast_tanh(q[a] + k[a]);
      p[j] = e;
      top = std::max(top, e);
    }
    float total = 0;
    for (int64_t j = 0; j < S; ++j) {
      p[j] = pad[j] != 0.f ? 0.f : std::exp(p[j] - top);
      total += p[j];
    }
    float* c = context.data() + n * Dv;
    for (int64_t j = 0; j < S; ++j) {
      if (p[j] == 0.f) continue;
      p[j] /= total;
      const float w = p[j];
      const float* h = ph + (b * S + j) * Dv;
#pragma omp simd
      for (int64_t i = 0; i < Dv; ++i) c[i] += w * h[i];
    }
  }
}

}  // namespace heed
