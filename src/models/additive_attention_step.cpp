#include "models/additive_attention_step.hpp"

#include <algorithm>
#include <string>
#include <type_traits>

#include "tensor/ops/fast_math.hpp"
#include "util/error.hpp"

namespace heed {
namespace {

// c += Σ_j w[j] · rows[j] (rows [S, D]), each element summed in order of j. Column blocks are
// kept in registers across the rows, so c is read and written once rather than once per row.
void add_weighted_rows(const float* w, const float* rows, int64_t S, int64_t D, float* c) {
  constexpr int64_t kBlock = 64;
  auto add_block = [&](int64_t i0, auto width) {
    float acc[width];
    for (int64_t i = 0; i < width; ++i) acc[i] = c[i0 + i];
    for (int64_t j = 0; j < S; ++j) {
      if (w[j] == 0.f) continue;  // padding
      const float wj = w[j];
      const float* h = rows + j * D + i0;
#pragma omp simd
      for (int64_t i = 0; i < width; ++i) acc[i] += wj * h[i];
    }
    for (int64_t i = 0; i < width; ++i) c[i0 + i] = acc[i];
  };
  int64_t i0 = 0;
  for (; i0 + kBlock <= D; i0 += kBlock) add_block(i0, std::integral_constant<int64_t, kBlock>());
  for (; i0 < D; ++i0) add_block(i0, std::integral_constant<int64_t, 1>());
}

}  // namespace

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
    for (int64_t j = 0; j < S; ++j) p[j] /= total;
    add_weighted_rows(p, ph + b * S * Dv, S, Dv, context.data() + n * Dv);
  }
}

}  // namespace heed
