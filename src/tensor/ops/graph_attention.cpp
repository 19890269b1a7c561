// GAT's attention over neighbour lists, fused: scores, softmax, coefficient dropout and the
// weighted sum of the neighbours' values in one pass over each node's edges, forward; two passes
// backward (by destination node for the score gradients, by source node along the column index
// for the value and t gradients, so no two threads write one row). The generic composition
// (gather, leaky_relu, segment_softmax, dropout, segment_sum) materialises [edges, H, F]; this
// keeps only the coefficients [edges, H] (and a byte per coefficient for the dropout mask). Inner loops run over the H
// heads or over a head's features (head_rows.hpp), so they vectorise; a node's dropout factors are drawn in one go.
#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tensor/fast_math.hpp"
#include "tensor/graph_ops.hpp"
#include "tensor/ops/dropout_mask.hpp"
#include "tensor/ops/head_rows.hpp"
#include "util/error.hpp"

namespace heed {
namespace {

// The dropout factors of entries first … first + count − 1 (all heads), or ones.
inline void dropout_factors(const std::optional<DropoutMask>& mask, std::vector<float>& out, int64_t first,
                            int64_t count, int64_t H) {
  out.resize(count * H);
  if (mask)
    mask->fill(out.data(), first * H, count * H);
  else
    std::fill(out.begin(), out.end(), 1.f);
}

}  // namespace

Var graph_attention(const Var& s, const Var& t, const Var& values, const Csr& neighbours, float negative_slope, float p,
                    Rng& rng, Tensor* weights_out) {
  const Csr& c = neighbours;
  const int64_t N = c.rows;
  if (values.ndim() != 3 || values.dim(0) != c.cols || s.shape() != Shape{N, values.dim(1)} ||
      t.shape() != Shape{c.cols, values.dim(1)})
    throw Error("graph_attention: s " + shape_str(s.shape()) + ", t " + shape_str(t.shape()) + ", values " +
                shape_str(values.shape()) + " over " + std::to_string(c.rows) + " x " + std::to_string(c.cols) +
                " neighbour lists");
  const int64_t H = values.dim(1), F = values.dim(2), HF = H * F;
  const float slope = negative_slope;
  const std::optional<DropoutMask> mask = p > 0.f ? std::optional<DropoutMask>(DropoutMask(p, rng)) : std::nullopt;
  const Tensor sv = s.value().contiguous(), tv = t.value().contiguous(), vv = values.value().contiguous();
  Tensor alpha = Tensor::empty({c.nnz(), H});
  Tensor out = Tensor::zeros({N, H, F});
  // Which coefficients the mask kept, for backward (a byte each: cheaper than drawing again).
  auto kept = std::make_shared<std::vector<uint8_t>>(mask ? c.nnz() * H : 0);
  const float* ps = sv.data();
  const float* pt = tv.data();
  const float* pv = vv.data();
  float* pa = alpha.data();
  float* po = out.data();
  const bool parallel = c.nnz() * HF > (1 << 15);
#pragma omp parallel if (parallel)
  {
    std::vector<float> top(H), inverse(H), factor, weight(H);
#pragma omp for schedule(dynamic, 64)
    for (int64_t i = 0; i < N; ++i) {
      const int64_t first = c.offsets[i], last = c.offsets[i + 1];
      const float* si = ps + i * H;
      std::fill(top.begin(), top.end(), -std::numeric_limits<float>::infinity());
      for (int64_t k = first; k < last; ++k) {
        const float* tj = pt + c.column[k] * H;
        float* a = pa + k * H;
#pragma omp simd
        for (int64_t h = 0; h < H; ++h) {
          const float z = si[h] + tj[h];
          a[h] = z > 0.f ? z : slope * z;
          top[h] = std::max(top[h], a[h]);
        }
      }
      std::fill(inverse.begin(), inverse.end(), 0.f);  // the sums first
      for (int64_t k = first; k < last; ++k) {
        float* a = pa + k * H;
#pragma omp simd
        for (int64_t h = 0; h < H; ++h) {
          a[h] = fast_exp(a[h] - top[h]);
          inverse[h] += a[h];
        }
      }
      for (int64_t h = 0; h < H; ++h) inverse[h] = 1.f / inverse[h];
      dropout_factors(mask, factor, first, last - first, H);
      if (mask) {
        uint8_t* kept_here = kept->data() + first * H;
        for (int64_t j = 0; j < (last - first) * H; ++j) kept_here[j] = factor[j] != 0.f;
      }
      float* o = po + i * HF;
      for (int64_t k = first; k < last; ++k) {
        float* a = pa + k * H;
        const float* m = factor.data() + (k - first) * H;
#pragma omp simd
        for (int64_t h = 0; h < H; ++h) {
          a[h] *= inverse[h];
          weight[h] = a[h] * m[h];
        }
        add_weighted_heads(o, pv + c.column[k] * HF, weight.data(), H, F);
      }
    }
  }
  if (weights_out) *weights_out = alpha;
  Var result(out, needs_grad({&s, &t, &values}));
  if (result.requires_grad()) {
    auto on = result.node_ptr();
    const float keep_scale = mask ? mask->keep_scale : 1.f;
    // The dropout factor of coefficient e (entry · H + head); `kept` lives as long as the closure.
    const uint8_t* kept_flags = kept->empty() ? nullptr : kept->data();
    auto factor_of = [kept, kept_flags, keep_scale](int64_t e) {
      return !kept_flags || kept_flags[e] ? keep_scale : 0.f;
    };
    record_backward([s, t, values, sv, tv, vv, alpha, on, &c, factor_of, slope, parallel, N, H, F, HF] {
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
          std::vector<float> dot(H), d(H);
#pragma omp for schedule(dynamic, 64)
          for (int64_t i = 0; i < N; ++i) {
            const int64_t first = c.offsets[i], last = c.offsets[i + 1];
            const float* gi = pg + i * HF;
            std::fill(dot.begin(), dot.end(), 0.f);
            for (int64_t k = first; k < last; ++k) {
              dot_per_head(d.data(), gi, pv + c.column[k] * HF, H, F);
              for (int64_t h = 0; h < H; ++h) {
                pz[k * H + h] = d[h] * factor_of(k * H + h);
                dot[h] += pa[k * H + h] * pz[k * H + h];
              }
            }
            const float* si = ps + i * H;
            float* dsi = pds + i * H;
            for (int64_t k = first; k < last; ++k) {
              const float* tj = pt + c.column[k] * H;
              float* zk = pz + k * H;
              const float* ak = pa + k * H;
#pragma omp simd
              for (int64_t h = 0; h < H; ++h) {
                const float de = ak[h] * (zk[h] - dot[h]);
                zk[h] = si[h] + tj[h] > 0.f ? de : slope * de;
                dsi[h] += zk[h];
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
#pragma omp parallel if (parallel)
      {
        std::vector<float> weight(H);
#pragma omp for schedule(dynamic, 64)
        for (int64_t j = 0; j < c.cols; ++j)
          for (int64_t e = c.column_offsets[j]; e < c.column_offsets[j + 1]; ++e) {
            const int64_t k = c.by_column[e];
            if (dt.defined())
#pragma omp simd
              for (int64_t h = 0; h < H; ++h) dt.data()[j * H + h] += pz[k * H + h];
            if (!dv.defined()) continue;
            for (int64_t h = 0; h < H; ++h) weight[h] = pa[k * H + h] * factor_of(k * H + h);
            add_weighted_heads(dv.data() + j * HF, pg + c.row_by_column[e] * HF, weight.data(), H, F);
          }
      }
      if (dt.defined()) t.accumulate_grad(dt);
      if (dv.defined()) values.accumulate_grad(dv);
    });
  }
  return result;
}

}  // namespace heed
