#include "tensor/quantize.hpp"

#include <algorithm>
#include <cmath>

#include "util/error.hpp"

namespace heed {

float quantize_row(const float* row, int64_t cols, int8_t* out, int levels) {
  float top = 0;
  for (int64_t i = 0; i < cols; ++i) top = std::max(top, std::fabs(row[i]));
  const float limit = static_cast<float>(levels);
  const float scale = top > 0 ? top / limit : 1.f;
  const float inverse = 1.f / scale;
  for (int64_t i = 0; i < cols; ++i) {
    const float q = std::nearbyint(row[i] * inverse);
    out[i] = static_cast<int8_t>(std::clamp(q, -limit, limit));
  }
  return scale;
}

int int8_weight_levels() {
  static const int levels = __builtin_cpu_supports("avx512vnni") || __builtin_cpu_supports("avxvnni") ? 127 : 63;
  return levels;
}

QuantizedRows quantize_rows(const Tensor& a, int levels) {
  if (a.ndim() != 2) throw Error("quantize_rows: a 2-D tensor expected, got " + shape_str(a.shape()));
  const Tensor dense = a.contiguous();
  QuantizedRows q;
  q.rows = a.dim(0);
  q.cols = a.dim(1);
  q.values.resize(static_cast<size_t>(q.rows * q.cols));
  q.scales.resize(static_cast<size_t>(q.rows));
  for (int64_t r = 0; r < q.rows; ++r)
    q.scales[r] = quantize_row(dense.data() + r * q.cols, q.cols, q.values.data() + r * q.cols, levels);
  return q;
}

Tensor dequantize_rows(const QuantizedRows& q) {
  if (q.values.size() != static_cast<size_t>(q.rows * q.cols) || q.scales.size() != static_cast<size_t>(q.rows))
    throw Error("dequantize_rows: " + std::to_string(q.values.size()) + " values and " +
                std::to_string(q.scales.size()) + " scales for " + std::to_string(q.rows) + " x " +
                std::to_string(q.cols));
  Tensor out = Tensor::empty({q.rows, q.cols});
  for (int64_t r = 0; r < q.rows; ++r)
    for (int64_t c = 0; c < q.cols; ++c) out.data()[r * q.cols + c] = q.scales[r] * q.values[r * q.cols + c];
  return out;
}

}  // namespace heed
