// Bahdanau (additive) attention, the two per-step parts of training that oneDNN serves badly.
// Scores, fused: e[b, j] = Σ_a v[a] tanh(q[b, a] + k[b, j, a]). Unfused, every decoder step would
// materialise the sum, the tanh and their gradients as autograd nodes; here only the tanh is kept.
// Contexts c[b] = Σ_j α[b, j] · h[b, j]: as a batched matmul these are B products with one row
// each, which oneDNN ran at about 10 GFLOP/s, in three passes over h per step (c, dα, dh); here
// forward is one pass and backward another.
#include <limits>

#include "tensor/fast_math.hpp"
#include "tensor/ops.hpp"
#include "tensor/weighted_rows.hpp"
#include "util/error.hpp"

namespace heed {

Var additive_attention_scores(const Var& query, const Var& keys, const Var& v, const Tensor& pad_mask) {
  const int64_t B = keys.dim(0), S = keys.dim(1), A = keys.dim(2);
  const bool masked = pad_mask.defined();
  if (query.dim(0) != B || query.dim(1) != A || v.value().numel() != A || (masked && pad_mask.shape() != Shape{B, S}))
    throw Error("attention scores: query " + shape_str(query.shape()) + ", keys " + shape_str(keys.shape()) + ", v " +
                shape_str(v.shape()) + (masked ? ", mask " + shape_str(pad_mask.shape()) : ""));
  const Tensor mv = masked ? pad_mask.contiguous() : Tensor();
  Tensor qv = query.value().contiguous(), kv = keys.value().contiguous(), vv = v.value().contiguous();
  Tensor e = Tensor::empty({B, S});
  const bool keep_tanh = needs_grad({&query, &keys, &v});
  // With gradients, tanh(q + k) is kept for backward (one [B, S, A] tensor per decoder step):
  // recomputing it there cost as much as the forward pass, the tanh being what these loops spend.
  Tensor th = keep_tanh ? Tensor::empty({B, S, A}) : Tensor();
  const float* pq = qv.data();
  const float* pk = kv.data();
  const float* pv = vv.data();
  float* pe = e.data();
  float* pth = keep_tanh ? th.data() : nullptr;
#pragma omp parallel for collapse(2) schedule(static) if (B * S * A > 65536)
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 0; j < S; ++j) {
      if (masked && mv.data()[b * S + j] != 0.f) {
        pe[b * S + j] = -std::numeric_limits<float>::infinity();
        continue;
      }
      const float* q = pq + b * A;
      const float* k = pk + (b * S + j) * A;
      float acc = 0;
      if (pth) {
        float* t = pth + (b * S + j) * A;
#pragma omp simd reduction(+ : acc)
        for (int64_t a = 0; a < A; ++a) {
          t[a] = fast_tanh(q[a] + k[a]);
          acc += pv[a] * t[a];
        }
      } else {
#pragma omp simd reduction(+ : acc)
        for (int64_t a = 0; a < A; ++a) acc += pv[a] * fast_tanh(q[a] + k[a]);
      }
      pe[b * S + j] = acc;
    }
  Var result(e, keep_tanh);
  if (result.requires_grad()) {
    auto on = result.node_ptr();
    record_backward([query, keys, v, th, vv, mv, masked, on, B, S, A] {
      if (!on->grad.defined()) return;
      Tensor g = on->grad.contiguous();
      // Sentences in parallel; dv as one row per sentence, summed in sentence order afterwards,
      // so the result does not depend on the thread count. Rows alternate between the threads:
      // batches come in length order and masked positions cost nothing, so halves would differ.
      Tensor dq = Tensor::zeros({B, A}), dv_rows = Tensor::zeros({B, A}), dv = Tensor::zeros({A});
      bool fresh_k = !keys.grad().defined();
      Tensor dk = fresh_k ? Tensor::zeros(keys.shape()) : keys.grad();
      const float* pth = th.data();
      const float* pv = vv.data();
      const float* pg = g.data();
      float* pdq = dq.data();
      float* pdk = dk.data();
#pragma omp parallel for schedule(static, 1) if (B * S * A > 65536)
      for (int64_t b = 0; b < B; ++b)
        for (int64_t j = 0; j < S; ++j) {
          const float ge = pg[b * S + j];
          if (ge == 0.f || (masked && mv.data()[b * S + j] != 0.f)) continue;  // masked: a constant −inf
          const float* tr = pth + (b * S + j) * A;
          float* dkr = pdk + (b * S + j) * A;
          float* dqr = pdq + b * A;
          float* dvr = dv_rows.data() + b * A;
#pragma omp simd
          for (int64_t a = 0; a < A; ++a) {
            const float t = tr[a];
            const float d = ge * pv[a] * (1.f - t * t);
            dqr[a] += d;
            dkr[a] += d;
            dvr[a] += ge * t;
          }
        }
      float* pdv = dv.data();
      for (int64_t b = 0; b < B; ++b)
#pragma omp simd
        for (int64_t a = 0; a < A; ++a) pdv[a] += dv_rows.data()[b * A + a];
      query.accumulate_grad(dq);
      if (fresh_k) keys.accumulate_grad(dk);
      v.accumulate_grad(dv.reshape(v.shape()));
    });
  }
  return result;
}

Var attention_context(const Var& alpha, const Var& values) {
  if (values.ndim() != 3 || alpha.shape() != Shape{values.dim(0), values.dim(1)})
    throw Error("attention context: weights " + shape_str(alpha.shape()) + ", values " + shape_str(values.shape()));
  const int64_t B = values.dim(0), S = values.dim(1), D = values.dim(2);
  Tensor av = alpha.value().contiguous(), hv = values.value().contiguous();
  Tensor c = Tensor::zeros({B, D});
  // Rows alternate between the threads, as in the scores' backward: masked positions are skipped.
#pragma omp parallel for schedule(static, 1) if (B * S * D > 65536)
  for (int64_t b = 0; b < B; ++b) {
    const float* w = av.data() + b * S;
    float* row = c.data() + b * D;
    add_weighted_rows<1>(&w, hv.data() + b * S * D, S, D, &row);
  }
  Var result(c, needs_grad({&alpha, &values}));
  if (result.requires_grad()) {
    auto on = result.node_ptr();
    record_backward([alpha, values, av, hv, on, B, S, D] {
      if (!on->grad.defined()) return;
      Tensor g = on->grad.contiguous();
      // dα[b, j] = dc[b] · h[b, j] and dh[b, j] += α[b, j] · dc[b], in one pass over h.
      Tensor da = Tensor::empty({B, S});
      const bool want_dh = values.requires_grad();
      const bool fresh = want_dh && !values.grad().defined();
      Tensor dh = !want_dh ? Tensor() : fresh ? Tensor::zeros(values.shape()) : values.grad();
#pragma omp parallel for schedule(static, 1) if (B * S * D > 65536)
      for (int64_t b = 0; b < B; ++b) {
        const float* dc = g.data() + b * D;
        for (int64_t j = 0; j < S; ++j) {
          const float* h = hv.data() + (b * S + j) * D;
          const float a = av.data()[b * S + j];
          float dot = 0;
          if (want_dh && a != 0.f) {
            float* dhr = dh.data() + (b * S + j) * D;
#pragma omp simd reduction(+ : dot)
            for (int64_t i = 0; i < D; ++i) {
              dot += dc[i] * h[i];
              dhr[i] += a * dc[i];
            }
          } else {
#pragma omp simd reduction(+ : dot)
            for (int64_t i = 0; i < D; ++i) dot += dc[i] * h[i];
          }
          da.data()[b * S + j] = dot;
        }
      }
      alpha.accumulate_grad(da);
      if (fresh) values.accumulate_grad(dh);
    });
  }
  return result;
}

}  // namespace heed
