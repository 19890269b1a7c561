// Sparse rows times per-head weights, with per-head input dropout: GAT's first layer, where the
// input is a bag of words (Cora: 1.3 % of the 2708 × 1433 entries are non-zero). oneDNN 2.6 has
// no sparse product; a dense one would multiply 75 times as many entries, and per-head dropout
// would need one masked copy of the whole input per head. Here every non-zero reads its weight
// rows once, forward (by row) and backward (by column, so dW rows are written by one thread).
#include <optional>
#include <string>
#include <vector>

#include "tensor/graph_ops.hpp"
#include "tensor/ops/dropout_mask.hpp"
#include "util/error.hpp"

namespace heed {

Var sparse_multihead_linear(const SparseRows& x, const Var& w, float p, Rng& rng) {
  const Csr& c = x.pattern;
  if (w.ndim() != 3 || w.dim(1) != c.cols || static_cast<int64_t>(x.values.size()) != c.nnz())
    throw Error("sparse_multihead_linear: input " + std::to_string(c.rows) + " x " + std::to_string(c.cols) +
                " with " + std::to_string(x.values.size()) + " values, weights " + shape_str(w.shape()));
  const int64_t N = c.rows, H = w.dim(0), Fin = w.dim(1), F = w.dim(2);
  const bool drop = p > 0.f;
  const std::optional<DropoutMask> mask = drop ? std::optional<DropoutMask>(DropoutMask(p, rng)) : std::nullopt;
  const Tensor wv = w.value().contiguous();
  Tensor out = Tensor::zeros({N, H, F});
  const float* pw = wv.data();
  float* po = out.data();
#pragma omp parallel for schedule(dynamic, 64) if (c.nnz() * H * F > (1 << 16))
  for (int64_t i = 0; i < N; ++i)
    for (int64_t k = c.offsets[i]; k < c.offsets[i + 1]; ++k) {
      const float v = x.values[k];
      const int64_t col = c.column[k];
      for (int64_t h = 0; h < H; ++h) {
        const float a = drop ? v * (*mask)(k * H + h) : v;
        if (a == 0.f) continue;
        const float* wr = pw + (h * Fin + col) * F;
        float* o = po + (i * H + h) * F;
#pragma omp simd
        for (int64_t f = 0; f < F; ++f) o[f] += a * wr[f];
      }
    }
  Var result(out, needs_grad({&w}));
  if (result.requires_grad()) {
    auto on = result.node_ptr();
    record_backward([w, on, &x, mask, drop, H, Fin, F] {
      if (!on->grad.defined()) return;
      const Csr& c = x.pattern;
      const Tensor g = on->grad.contiguous();
      Tensor dw = Tensor::zeros(w.shape());
      const float* pg = g.data();
      float* pd = dw.data();
      // dW[h, col, :] = Σ over the entries of column col of value · m_h · dOut[row, h, :].
#pragma omp parallel for schedule(dynamic, 64) if (c.nnz() * H * F > (1 << 16))
      for (int64_t col = 0; col < Fin; ++col)
        for (int64_t e = c.column_offsets[col]; e < c.column_offsets[col + 1]; ++e) {
          const int64_t k = c.by_column[e], i = c.row[k];
          const float v = x.values[k];
          for (int64_t h = 0; h < H; ++h) {
            const float a = drop ? v * (*mask)(k * H + h) : v;
            if (a == 0.f) continue;
            const float* gr = pg + (i * H + h) * F;
            float* d = pd + (h * Fin + col) * F;
#pragma omp simd
            for (int64_t f = 0; f < F; ++f) d[f] += a * gr[f];
          }
        }
      w.accumulate_grad(dw);
    });
  }
  return result;
}

}  // namespace heed
