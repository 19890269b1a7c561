// GAT's attention over neighbour lists, fused: scores, softmax, coefficient dropout and the
// weighted sum of the neighbours' values in one pass over each node's edges, forward; two passes
// backward (by destination node for the score gradients, by source node along the column index
// for the value and t gradients, so no two threads write one row). The generic composition
// (gather, leaky_relu, segment_softmax, dropout, segment_sum) materialises [edges, H, F]; this
// keeps only the coefficients [edges, H].
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "tensor/graph_ops.hpp"
#include "tensor/ops/dropout_mask.hpp"
#include "util/error.hpp"

namespace heed {

Var graph_attention(const Var& s, const Var& t, const Var& values, const Csr& neighbours, float negative_slope,
                    float p, Rng& rng, Tensor* weights_out) {
  const Csr& c = neighbours;
  const int64_t N = c.rows;
  if (values.ndim() != 3 || values.dim(0) != c.cols || s.shape() != Shape{N, values.dim(1)} ||
      t.shape() != Shape{c.cols, values.dim(1)})
    throw Error("graph_attention: s " + shape_str(s.shape()) + ", t " + shape_str(t.shape()) + ", values " +
                shape_str(values.shape()) + " over " + std::to_string(c.rows) + " x " + std::to_string(c.cols) +
                " neighbour lists");
  const int64_t H = values.dim(1), F = values.dim(2);
  const float slope = negative_slope;
  const std::optional<DropoutMask> mask = p > 0.f ? std::optional<DropoutMask>(DropoutMask(p, rng)) : std::nullopt;
  const Tensor sv = s.value().contiguous(), tv = t.value().contiguous(), vv = values.value().contiguous();
  Tensor alpha = Tensor::empty({c.nnz(), H});
  Tensor out = Tensor::zeros({N, H, F});
  const float* ps = sv.data();
  const float* pt = tv.data();
  const float* pv = vv.data();
  float* pa = alpha.data();
  float* po = out.data();
  const bool parallel = c.nnz() * H * F > (1 << 15);
#pragma omp parallel if (parallel)
  {
    std::vector<float> top(H), total(H);
#pragma omp for schedule(dynamic, 64)
    for (int64_t i = 0; i < N; ++i) {
      const int64_t first = c.offsets[i], last = c.offsets[i + 1];
      const float* si = ps + i * H;
      std::fill(top.begin(), top.end(), -std::numeric_limits<float>::infinity());
      std::fill(total.begin(), total.end(), 0.f);
      for (int64_t k = first; k < last; ++k) {
        const float* tj = pt + c.column[k] * H;
        float* a = pa + k * H;
        for (int64_t h = 0; h < H; ++h) {
          const float z = si[h] + tj[h];
          a[h] = z > 0.f ? z : slope * z;
          top[h] = std::max(top[h], a[h]);
        }
      }
      for (int64_t k = first; k < last; ++k) {
        float* a = pa + k * H;
        for (int64_t h = 0; h < H; ++h) total[h] += a[h] = std::exp(a[h] - top[h]);
      }
      for (int64_t k = first; k < last; ++k) {
        float* a = pa + k * H;
        const float* vj = pv + c.column[k] * H * F;
        float* o = po + i * H * F;
        for (int64_t h = 0; h < H; ++h) {
          a[h] /= total[h];
          const float w = mask ? a[h] * (*mask)(k * H + h) : a[h];
          if (w == 0.f) continue;
#pragma omp simd
          for (int64_t f = 0; f < F; ++f) o[h * F + f] += w * vj[h * F + f];
        }
      }
    }
  }
  if (weights_out) *weights_out = alpha;
  Var result(out, needs_grad({&s, &t, &values}));
  if (result.requires_grad()) {
    auto on = result.node_ptr();
    record_backward([s, t, values, sv, tv, vv, alpha, on, &c, mask, slope, parallel, N, H, F] {
      if (!on->grad.defined()) return;
      const Tensor g = on->grad.contiguous();
      const float* pg = g.data();
      const float* ps = sv.data();
      const float* pt = tv.data();
      const float* pv = vv.data();
      const float* pa = alpha.data();
      const bool want_scores = s.requires_grad() || t.requires_grad();
      Tensor dz = want_scores ? Tensor::empty({c.nnz(), H}) : Tensor();
      Tensor ds = want_scores ? Tensor::zeros({N, H}) : Tensor();
      if (want_scores) {
        float* pz = dz.data();
        float* pds = ds.data();
        // By destination i: dα̃_ij = dOut_i · v_j, dα = dα̃ · mask, then the softmax and the
        // leaky ReLU: dz_ij = LeakyReLU'(z_ij) · α_ij (dα_ij − Σ_k α_ik dα_ik).
#pragma omp parallel if (parallel)
        {
          std::vector<float> dot(H);
#pragma omp for schedule(dynamic, 64)
          for (int64_t i = 0; i < N; ++i) {
            const int64_t first = c.offsets[i], last = c.offsets[i + 1];
            const float* gi = pg + i * H * F;
            std::fill(dot.begin(), dot.end(), 0.f);
            for (int64_t k = first; k < last; ++k) {
              const float* vj = pv + c.column[k] * H * F;
              for (int64_t h = 0; h < H; ++h) {
                float d = 0;
#pragma omp simd reduction(+ : d)
                for (int64_t f = 0; f < F; ++f) d += gi[h * F + f] * vj[h * F + f];
                if (mask) d *= (*mask)(k * H + h);
                pz[k * H + h] = d;
                dot[h] += pa[k * H + h] * d;
              }
            }
            const float* si = ps + i * H;
            for (int64_t k = first; k < last; ++k) {
              const float* tj = pt + c.column[k] * H;
              for (int64_t h = 0; h < H; ++h) {
                const float de = pa[k * H + h] * (pz[k * H + h] - dot[h]);
                const float dzk = si[h] + tj[h] > 0.f ? de : slope * de;
                pz[k * H + h] = dzk;
                pds[i * H + h] += dzk;
              }
            }
          }
        }
        s.accumulate_grad(ds);
      }
      if (!t.requires_grad() && !values.requires_grad()) return;
      // By source j, along the column index: dt_j = Σ_i dz_ij, dv_j = Σ_i α̃_ij · dOut_i.
      Tensor dt = t.requires_grad() ? Tensor::zeros(t.shape()) : Tensor();
      Tensor dv = values.requires_grad() ? Tensor::zeros(values.shape()) : Tensor();
      const float* pz = want_scores ? dz.data() : nullptr;
#pragma omp parallel for schedule(dynamic, 64) if (parallel)
      for (int64_t j = 0; j < c.cols; ++j)
        for (int64_t e = c.column_offsets[j]; e < c.column_offsets[j + 1]; ++e) {
          const int64_t k = c.by_column[e], i = c.row[k];
          if (dt.defined())
            for (int64_t h = 0; h < H; ++h) dt.data()[j * H + h] += pz[k * H + h];
          if (!dv.defined()) continue;
          float* dvj = dv.data() + j * H * F;
          const float* gi = pg + i * H * F;
          for (int64_t h = 0; h < H; ++h) {
            const float w = mask ? pa[k * H + h] * (*mask)(k * H + h) : pa[k * H + h];
            if (w == 0.f) continue;
#pragma omp simd
            for (int64_t f = 0; f < F; ++f) dvj[h * F + f] += w * gi[h * F + f];
          }
        }
      if (dt.defined()) t.accumulate_grad(dt);
      if (dv.defined()) values.accumulate_grad(dv);
    });
  }
  return result;
}

}  // namespace heed
