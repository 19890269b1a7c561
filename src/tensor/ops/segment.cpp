// The generic pieces of attention over sparse sets: softmax within each row's entries, sums of
// each row's entries, and a per-head dot product (the two halves of GAT's score vector).
// Straightforward loops; graph_attention.cpp fuses what a GAT layer does with them.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tensor/graph_ops.hpp"
#include "tensor/ops.hpp"
#include "util/error.hpp"

namespace heed {
namespace {

// Per-row loops run in parallel when the whole op touches at least this many floats.
constexpr int64_t kParallelWork = 1 << 15;

void check_entries(const char* op, const Var& x, const Csr& sets) {
  if (x.ndim() < 1 || x.dim(0) != sets.nnz())
    throw Error(std::string(op) + ": " + shape_str(x.shape()) + " for " + std::to_string(sets.nnz()) + " entries");
}

}  // namespace

Var segment_softmax(const Var& x, const Csr& sets) {
  check_entries("segment_softmax", x, sets);
  const Tensor xv = x.value().contiguous();
  const int64_t H = sets.nnz() ? xv.numel() / sets.nnz() : 1;
  Tensor y = Tensor::empty(xv.shape());
  const float* px = xv.data();
  float* py = y.data();
#pragma omp parallel for schedule(dynamic, 64) if (xv.numel() > kParallelWork)
  for (int64_t i = 0; i < sets.rows; ++i) {
    const int64_t first = sets.offsets[i], last = sets.offsets[i + 1];
    for (int64_t h = 0; h < H; ++h) {
      float top = -std::numeric_limits<float>::infinity();
      for (int64_t k = first; k < last; ++k) top = std::max(top, px[k * H + h]);
      float total = 0;
      for (int64_t k = first; k < last; ++k) total += py[k * H + h] = std::exp(px[k * H + h] - top);
      for (int64_t k = first; k < last; ++k) py[k * H + h] /= total;
    }
  }
  Var result(y, needs_grad({&x}));
  if (result.requires_grad()) {
    auto on = result.node_ptr();
    record_backward([x, y, on, &sets, H] {
      if (!on->grad.defined()) return;
      const Tensor g = on->grad.contiguous();
      Tensor dx = Tensor::empty(y.shape());
      const float* pg = g.data();
      const float* py = y.data();
      float* pd = dx.data();
#pragma omp parallel for schedule(dynamic, 64) if (y.numel() > kParallelWork)
      for (int64_t i = 0; i < sets.rows; ++i) {
        const int64_t first = sets.offsets[i], last = sets.offsets[i + 1];
        for (int64_t h = 0; h < H; ++h) {
          float dot = 0;
          for (int64_t k = first; k < last; ++k) dot += py[k * H + h] * pg[k * H + h];
          for (int64_t k = first; k < last; ++k) pd[k * H + h] = py[k * H + h] * (pg[k * H + h] - dot);
        }
      }
      x.accumulate_grad(dx);
    });
  }
  return result;
}

Var segment_sum(const Var& x, const Csr& sets) {
  check_entries("segment_sum", x, sets);
  const Tensor xv = x.value().contiguous();
  const int64_t W = sets.nnz() ? xv.numel() / sets.nnz() : shape_numel(Shape(xv.shape().begin() + 1, xv.shape().end()));
  Shape shape = xv.shape();
  shape[0] = sets.rows;
  Tensor out = Tensor::zeros(shape);
  const float* px = xv.data();
  float* po = out.data();
#pragma omp parallel for schedule(dynamic, 64) if (xv.numel() > kParallelWork)
  for (int64_t i = 0; i < sets.rows; ++i)
    for (int64_t k = sets.offsets[i]; k < sets.offsets[i + 1]; ++k)
#pragma omp simd
      for (int64_t w = 0; w < W; ++w) po[i * W + w] += px[k * W + w];
  Var result(out, needs_grad({&x}));
  if (result.requires_grad()) {
    auto on = result.node_ptr();
    record_backward([x, on, &sets, W] {
      if (!on->grad.defined()) return;
      const Tensor g = on->grad.contiguous();
      Tensor dx = Tensor::empty(x.shape());
      const float* pg = g.data();
      float* pd = dx.data();
#pragma omp parallel for schedule(static) if (dx.numel() > kParallelWork)
      for (int64_t k = 0; k < sets.nnz(); ++k) std::copy(pg + sets.row[k] * W, pg + (sets.row[k] + 1) * W, pd + k * W);
      x.accumulate_grad(dx);
    });
  }
  return result;
}

Var per_head_dot(const Var& x, const Var& w) {
  if (x.ndim() != 3 || w.ndim() != 2 || x.dim(1) != w.dim(0) || x.dim(2) != w.dim(1))
    throw Error("per_head_dot: x " + shape_str(x.shape()) + ", w " + shape_str(w.shape()));
  const int64_t N = x.dim(0), H = x.dim(1), F = x.dim(2);
  const Tensor xv = x.value().contiguous(), wv = w.value().contiguous();
  Tensor out = Tensor::empty({N, H});
  const float* px = xv.data();
  const float* pw = wv.data();
  float* po = out.data();
#pragma omp parallel for schedule(static) if (N * H * F > kParallelWork)
  for (int64_t n = 0; n < N; ++n)
    for (int64_t h = 0; h < H; ++h) {
      float acc = 0;
#pragma omp simd reduction(+ : acc)
      for (int64_t f = 0; f < F; ++f) acc += px[(n * H + h) * F + f] * pw[h * F + f];
      po[n * H + h] = acc;
    }
  Var result(out, needs_grad({&x, &w}));
  if (result.requires_grad()) {
    auto on = result.node_ptr();
    record_backward([x, w, xv, wv, on, N, H, F] {
      if (!on->grad.defined()) return;
      const Tensor g = on->grad.contiguous();
      const float* pg = g.data();
      if (x.requires_grad()) {
        Tensor dx = Tensor::empty(x.shape());
        float* pd = dx.data();
        const float* pw = wv.data();
#pragma omp parallel for schedule(static) if (N * H * F > kParallelWork)
        for (int64_t n = 0; n < N; ++n)
          for (int64_t h = 0; h < H; ++h)
            for (int64_t f = 0; f < F; ++f) pd[(n * H + h) * F + f] = pg[n * H + h] * pw[h * F + f];
        x.accumulate_grad(dx);
      }
      if (w.requires_grad()) {
        // dw = Σ_n g[n, h] · x[n, h, :]: partial sums over fixed blocks of rows, added in block
        // order, so the result does not depend on the thread count.
        constexpr int64_t kBlock = 1024;
        const int64_t blocks = (N + kBlock - 1) / kBlock;
        std::vector<float> partial(std::max<int64_t>(blocks, 1) * H * F, 0.f);
        const float* px = xv.data();
#pragma omp parallel for schedule(static) if (N * H * F > kParallelWork)
        for (int64_t b = 0; b < blocks; ++b) {
          float* acc = partial.data() + b * H * F;
          for (int64_t n = b * kBlock; n < std::min(N, (b + 1) * kBlock); ++n)
            for (int64_t h = 0; h < H; ++h)
#pragma omp simd
              for (int64_t f = 0; f < F; ++f) acc[h * F + f] += pg[n * H + h] * px[(n * H + h) * F + f];
        }
        Tensor dw = Tensor::zeros(w.shape());
        for (int64_t b = 0; b < blocks; ++b)
          for (int64_t i = 0; i < H * F; ++i) dw.data()[i] += partial[b * H * F + i];
        w.accumulate_grad(dw);
      }
    });
  }
  return result;
}

}  // namespace heed
