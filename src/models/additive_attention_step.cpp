#include "models/additive_attention_step.hpp"

#include <algorithm>
#include <string>

#include "tensor/fast_math.hpp"
#include "tensor/weighted_rows.hpp"
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
    if (b < 0 || b >= B)
      throw Error("additive_attention_step: source row " + std::to_string(b) + " of " + std::to_string(B));
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
  }
  // Beam search keeps a sentence's rows together: up to four consecutive rows with the same
  // encoder row sum its value rows in one pass.
  constexpr int64_t kMaxGroup = 4;
  std::vector<int64_t> group_start;
  for (int64_t n = 0; n < N; ++n)
    if (n == 0 || source_row[n] != source_row[n - 1] || n - group_start.back() == kMaxGroup) group_start.push_back(n);
  group_start.push_back(N);
  const int64_t groups = static_cast<int64_t>(group_start.size()) - 1;
#pragma omp parallel for schedule(static) if (N * S * Dv > 65536)
  for (int64_t k = 0; k < groups; ++k) {
    const int64_t first = group_start[k], rows = group_start[k + 1] - first;
    const float* w[kMaxGroup];
    float* c[kMaxGroup];
    for (int64_t g = 0; g < rows; ++g) {
      w[g] = alpha.data() + (first + g) * S;
      c[g] = context.data() + (first + g) * Dv;
    }
    const float* value_rows = ph + source_row[first] * S * Dv;
    switch (rows) {
      case 4: add_weighted_rows<4>(w, value_rows, S, Dv, c); break;
      case 3: add_weighted_rows<3>(w, value_rows, S, Dv, c); break;
      case 2: add_weighted_rows<2>(w, value_rows, S, Dv, c); break;
      default: add_weighted_rows<1>(w, value_rows, S, Dv, c); break;
    }
  }
}

}  // namespace heed
