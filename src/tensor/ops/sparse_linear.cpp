// Sparse rows times per-head weights, with per-head input dropout: GAT's first layer, where the
// input is a bag of words (Cora: 1.3 % of the 2708 × 1433 entries are non-zero). oneDNN 2.6 has
// no sparse product; a dense one would multiply 75 times as many entries, and per-head dropout
// would need one masked copy of the whole input per head. Here every non-zero reads its weight
// row once, forward (by row) and backward (by column, so a dW row is written by one thread).
// The weights work transposed, [F_in, H·F]: a non-zero then meets its H·F weights contiguous,
// scaled per head by its factors (value × mask).
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tensor/graph_ops.hpp"
#include "tensor/ops/dropout_mask.hpp"
#include "tensor/ops/head_rows.hpp"
#include "util/error.hpp"

namespace heed {
namespace {

// [H, A, B] ↔ [A, H, B]
Tensor swap_first_axes(const Tensor& t) { return t.transpose(0, 1).contiguous(); }

}  // namespace

Var sparse_multihead_linear(const SparseRows& x, const Var& w, float p, Rng& rng) {
  const Csr& c = x.pattern;
  if (w.ndim() != 3 || w.dim(1) != c.cols || static_cast<int64_t>(x.values.size()) != c.nnz())
    throw Error("sparse_multihead_linear: input " + std::to_string(c.rows) + " x " + std::to_string(c.cols) + " with " +
                std::to_string(x.values.size()) + " values, weights " + shape_str(w.shape()));
  const int64_t N = c.rows, H = w.dim(0), Fin = w.dim(1), F = w.dim(2), HF = H * F;
  const std::optional<DropoutMask> mask = p > 0.f ? std::optional<DropoutMask>(DropoutMask(p, rng)) : std::nullopt;
  const Tensor wt = swap_first_axes(w.value());  // [F_in, H, F]
  Tensor out = Tensor::zeros({N, H, F});
  // Which (entry, head) the mask kept, for backward (a byte each: cheaper than drawing again).
  auto kept = std::make_shared<std::vector<uint8_t>>(mask ? c.nnz() * H : 0);
  const bool parallel = c.nnz() * HF > (1 << 16);
#pragma omp parallel if (parallel)
  {
    std::vector<float> factor;
#pragma omp for schedule(dynamic, 64)
    for (int64_t i = 0; i < N; ++i) {
      const int64_t first = c.offsets[i], count = c.offsets[i + 1] - first;
      factor.resize(count * H);
      if (mask) {
        mask->fill(factor.data(), first * H, count * H);
        uint8_t* kept_here = kept->data() + first * H;
        for (int64_t j = 0; j < count * H; ++j) kept_here[j] = factor[j] != 0.f;
      } else {
        std::fill(factor.begin(), factor.end(), 1.f);
      }
      float* o = out.data() + i * HF;
      for (int64_t k = 0; k < count; ++k) {
        float* fk = factor.data() + k * H;
        for (int64_t h = 0; h < H; ++h) fk[h] *= x.values[first + k];
        add_weighted_heads(o, wt.data() + c.column[first + k] * HF, fk, H, F);
      }
    }
  }
  Var result(out, needs_grad({&w}));
  if (result.requires_grad()) {
    auto on = result.node_ptr();
    const float keep_scale = mask ? mask->keep_scale : 1.f;
    record_backward([w, on, &x, kept, keep_scale, parallel, H, Fin, F, HF] {
      if (!on->grad.defined()) return;
      const Csr& c = x.pattern;
      const Tensor g = on->grad.contiguous();
      Tensor dwt = Tensor::zeros({Fin, H, F});
      const uint8_t* kept_flags = kept->empty() ? nullptr : kept->data();
      // dW[h, col, :] = Σ over column col's entries of value · m_h · dOut[row, h, :].
#pragma omp parallel if (parallel)
      {
        std::vector<float> factor(H);
#pragma omp for schedule(dynamic, 64)
        for (int64_t col = 0; col < Fin; ++col)
          for (int64_t e = c.column_offsets[col]; e < c.column_offsets[col + 1]; ++e) {
            const int64_t k = c.by_column[e];
            const float v = x.values[k];
            for (int64_t h = 0; h < H; ++h) factor[h] = !kept_flags || kept_flags[k * H + h] ? v * keep_scale : 0.f;
            add_weighted_heads(dwt.data() + col * HF, g.data() + c.row_by_column[e] * HF, factor.data(), H, F);
          }
      }
      w.accumulate_grad(swap_first_axes(dwt));
    });
  }
  return result;
}

}  // namespace heed
