// Plain loops that oneDNN has no primitive for: in-place accumulation and broadcast reductions.
#include <cstring>

#include "tensor/ops.hpp"
#include "tensor/ops/broadcast.hpp"
#include "util/error.hpp"

namespace heed {

void add_into(const Tensor& dst, const Tensor& src) {
  if (dst.shape() != src.shape())
    throw Error("add_into: " + shape_str(src.shape()) + " into " + shape_str(dst.shape()));
  Tensor s = src.contiguous();
  float* d = dst.data();
  const float* p = s.data();
  const int64_t n = dst.numel();
#pragma omp parallel for simd schedule(static) if (n > 65536)
  for (int64_t i = 0; i < n; ++i) d[i] += p[i];
}

void scale_into(const Tensor& dst, float s) {
  float* d = dst.data();
  const int64_t n = dst.numel();
#pragma omp parallel for simd schedule(static) if (n > 65536)
  for (int64_t i = 0; i < n; ++i) d[i] *= s;
}

Tensor reduce_to_shape(const Tensor& grad, const Shape& to) {
  if (grad.shape() == to) return grad;
  Tensor g = grad.contiguous();
  Tensor out = Tensor::zeros(to);
  if (repeats_over_rows(g.shape(), to)) {  // column sums, rows added in order as the runs below would
    const int64_t inner = out.numel(), rows = g.numel() / inner;
    float* dst = out.data();
    for (int64_t r = 0; r < rows; ++r) {
      const float* src = g.data() + r * inner;
#pragma omp simd
      for (int64_t j = 0; j < inner; ++j) dst[j] += src[j];
    }
    return out;
  }
  Broadcast bc(g.shape(), to);
  const float* src = g.data();
  float* dst = out.data();
  bc.for_each_run([&](int64_t out_offset, int64_t b_offset, int64_t len, int64_t b_step) {
    if (b_step == 0) {
      float acc = 0;
      for (int64_t j = 0; j < len; ++j) acc += src[out_offset + j];
      dst[b_offset] += acc;
    } else {
      for (int64_t j = 0; j < len; ++j) dst[b_offset + j] += src[out_offset + j];
    }
  });
  return out;
}

}  // namespace heed
