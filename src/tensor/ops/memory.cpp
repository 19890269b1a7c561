// The NTM's memory ops (tensor/memory_ops.hpp), forward and backward side by side. Each runs
// once per head per time step on [B, N] weights or a [B, N, W] memory: a few thousand floats, so
// plain serial loops (a parallel region would cost more than the arithmetic).
#include <algorithm>
#include <cmath>
#include <string>

#include "tensor/memory_ops.hpp"
#include "util/error.hpp"

namespace heed {
namespace {

constexpr float kSharpenEps = 1e-12f;

// (i mod n) in 0 .. n−1 for any i.
inline int64_t wrap(int64_t i, int64_t n) { return ((i % n) + n) % n; }

}  // namespace

Var softplus(const Var& x) {
  const Tensor xv = x.value().contiguous();
  Tensor y = Tensor::empty(xv.shape());
  const int64_t n = xv.numel();
  const float* in = xv.data();
  float* out = y.data();
  for (int64_t i = 0; i < n; ++i) {
    const float v = in[i];
    out[i] = v > 0 ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v));
  }
  Var result(y, needs_grad({&x}));
  if (result.requires_grad()) {
    auto on = result.node_ptr();
    record_backward([x, xv, on] {
      if (!on->grad.defined()) return;
      const Tensor g = on->grad.contiguous();
      Tensor dx = Tensor::empty(xv.shape());
      const int64_t n = xv.numel();
      const float *in = xv.data(), *dy = g.data();
      float* out = dx.data();
      for (int64_t i = 0; i < n; ++i) out[i] = dy[i] / (1.f + std::exp(-in[i]));
      x.accumulate_grad(dx);
    });
  }
  return result;
}

Var circular_shift(const Var& w, const Var& shift) {
  const int64_t B = w.dim(0), N = w.dim(1), K = shift.ndim() == 2 ? shift.dim(1) : 0;
  if (w.ndim() != 2 || shift.ndim() != 2 || shift.dim(0) != B || K % 2 == 0)
    throw Error("circular_shift: weights " + shape_str(w.shape()) + ", shifts " + shape_str(shift.shape()) +
                " (need [B, N] and [B, K], K odd)");
  const int64_t half = (K - 1) / 2;
  const Tensor wv = w.value().contiguous(), sv = shift.value().contiguous();
  Tensor out = Tensor::zeros({B, N});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t k = 0; k < K; ++k) {
      const float s = sv.data()[b * K + k];
      const float* wr = wv.data() + b * N;
      float* o = out.data() + b * N;
      for (int64_t i = 0; i < N; ++i) o[i] += s * wr[wrap(i - (k - half), N)];
    }
  Var result(out, needs_grad({&w, &shift}));
  if (result.requires_grad()) {
    auto on = result.node_ptr();
    record_backward([w, shift, wv, sv, on, B, N, K, half] {
      if (!on->grad.defined()) return;
      const Tensor g = on->grad.contiguous();
      Tensor dw = Tensor::zeros({B, N}), ds = Tensor::zeros({B, K});
      for (int64_t b = 0; b < B; ++b)
        for (int64_t k = 0; k < K; ++k) {
          const float s = sv.data()[b * K + k];
          const float* gr = g.data() + b * N;
          const float* wr = wv.data() + b * N;
          float* dwr = dw.data() + b * N;
          double dot = 0;
          for (int64_t i = 0; i < N; ++i) {
            const int64_t j = wrap(i - (k - half), N);
            dwr[j] += s * gr[i];
            dot += static_cast<double>(gr[i]) * wr[j];
          }
          ds.data()[b * K + k] = static_cast<float>(dot);
        }
      w.accumulate_grad(dw);
      shift.accumulate_grad(ds);
    });
  }
  return result;
}

Var sharpen(const Var& w, const Var& gamma) {
  const int64_t B = w.dim(0), N = w.dim(1);
  if (w.ndim() != 2 || gamma.shape() != Shape{B, 1})
    throw Error("sharpen: weights " + shape_str(w.shape()) + ", gamma " + shape_str(gamma.shape()) +
                " (need [B, N] and [B, 1])");
  const Tensor wv = w.value().contiguous(), gv = gamma.value().contiguous();
  // y = softmax(γ · log(w + ε)): the largest term is subtracted before exp, so neither a large γ
  // nor weights near 0 overflow or give 0/0.
  Tensor logs = Tensor::empty({B, N}), y = Tensor::empty({B, N});
  for (int64_t b = 0; b < B; ++b) {
    const float gb = gv.data()[b];
    const float* wr = wv.data() + b * N;
    float* lr = logs.data() + b * N;
    float* yr = y.data() + b * N;
    float top = -INFINITY;
    for (int64_t i = 0; i < N; ++i) {
      lr[i] = std::log(std::max(wr[i], 0.f) + kSharpenEps);
      top = std::max(top, gb * lr[i]);
    }
    double total = 0;
    for (int64_t i = 0; i < N; ++i) total += yr[i] = std::exp(gb * lr[i] - top);
    for (int64_t i = 0; i < N; ++i) yr[i] = static_cast<float>(yr[i] / total);
  }
  Var result(y, needs_grad({&w, &gamma}));
  if (result.requires_grad()) {
    auto on = result.node_ptr();
    record_backward([w, gamma, wv, gv, logs, y, on, B, N] {
      if (!on->grad.defined()) return;
      const Tensor g = on->grad.contiguous();
      Tensor dw = Tensor::empty({B, N}), dgamma = Tensor::empty({B, 1});
      for (int64_t b = 0; b < B; ++b) {
        const float* gr = g.data() + b * N;
        const float* yr = y.data() + b * N;
        const float* lr = logs.data() + b * N;
        const float* wr = wv.data() + b * N;
        double yg = 0;
        for (int64_t i = 0; i < N; ++i) yg += static_cast<double>(yr[i]) * gr[i];
        // dz = y ∘ (g − y·g) for z = γ · log(w + ε); then dw = dz γ / (w + ε), dγ = Σ dz log(w + ε).
        double dg = 0;
        for (int64_t i = 0; i < N; ++i) {
          const float dz = yr[i] * (gr[i] - static_cast<float>(yg));
          dw.data()[b * N + i] = wr[i] > 0.f ? dz * gv.data()[b] / (wr[i] + kSharpenEps) : 0.f;
          dg += static_cast<double>(dz) * lr[i];
        }
        dgamma.data()[b] = static_cast<float>(dg);
      }
      w.accumulate_grad(dw);
      gamma.accumulate_grad(dgamma);
    });
  }
  return result;
}

Var memory_write(const Var& memory, const Var& w, const Var& erase, const Var& add) {
  const int64_t B = memory.dim(0), N = memory.dim(1), W = memory.dim(2);
  if (memory.ndim() != 3 || w.shape() != Shape{B, N} || erase.shape() != Shape{B, W} || add.shape() != Shape{B, W})
    throw Error("memory_write: memory " + shape_str(memory.shape()) + ", weights " + shape_str(w.shape()) + ", erase " +
                shape_str(erase.shape()) + ", add " + shape_str(add.shape()));
  const Tensor mv = memory.value().contiguous(), wv = w.value().contiguous(), ev = erase.value().contiguous(),
               av = add.value().contiguous();
  Tensor out = Tensor::empty({B, N, W});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < N; ++i) {
      const float wi = wv.data()[b * N + i];
      const float* m = mv.data() + (b * N + i) * W;
      const float* e = ev.data() + b * W;
      const float* a = av.data() + b * W;
      float* o = out.data() + (b * N + i) * W;
      for (int64_t j = 0; j < W; ++j) o[j] = m[j] * (1.f - wi * e[j]) + wi * a[j];
    }
  Var result(out, needs_grad({&memory, &w, &erase, &add}));
  if (result.requires_grad()) {
    auto on = result.node_ptr();
    record_backward([memory, w, erase, add, mv, wv, ev, av, on, B, N, W] {
      if (!on->grad.defined()) return;
      const Tensor g = on->grad.contiguous();
      Tensor dm = Tensor::empty({B, N, W}), dw = Tensor::empty({B, N}), de = Tensor::zeros({B, W}),
             da = Tensor::zeros({B, W});
      for (int64_t b = 0; b < B; ++b)
        for (int64_t i = 0; i < N; ++i) {
          const float wi = wv.data()[b * N + i];
          const float* gr = g.data() + (b * N + i) * W;
          const float* m = mv.data() + (b * N + i) * W;
          const float* e = ev.data() + b * W;
          const float* a = av.data() + b * W;
          float* dmr = dm.data() + (b * N + i) * W;
          float* der = de.data() + b * W;
          float* dar = da.data() + b * W;
          double dwi = 0;
          for (int64_t j = 0; j < W; ++j) {
            dmr[j] = gr[j] * (1.f - wi * e[j]);
            dwi += static_cast<double>(gr[j]) * (a[j] - m[j] * e[j]);
            der[j] -= gr[j] * m[j] * wi;
            dar[j] += gr[j] * wi;
          }
          dw.data()[b * N + i] = static_cast<float>(dwi);
        }
      memory.accumulate_grad(dm);
      w.accumulate_grad(dw);
      erase.accumulate_grad(de);
      add.accumulate_grad(da);
    });
  }
  return result;
}

Var select_rows(const std::vector<uint8_t>& keep, const Var& next, const Var& previous) {
  const int64_t B = static_cast<int64_t>(keep.size());
  if (next.shape() != previous.shape() || next.ndim() < 1 || next.dim(0) != B)
    throw Error("select_rows: " + std::to_string(B) + " flags for " + shape_str(next.shape()) + " and " +
                shape_str(previous.shape()));
  const int64_t row = B ? next.value().numel() / B : 0;
  const Tensor nv = next.value().contiguous(), pv = previous.value().contiguous();
  Tensor out = Tensor::empty(nv.shape());
  for (int64_t b = 0; b < B; ++b) std::copy_n((keep[b] ? nv : pv).data() + b * row, row, out.data() + b * row);
  Var result(out, needs_grad({&next, &previous}));
  if (result.requires_grad()) {
    auto on = result.node_ptr();
    record_backward([keep, next, previous, on, B, row] {
      if (!on->grad.defined()) return;
      const Tensor g = on->grad.contiguous();
      Tensor dn = Tensor::zeros(g.shape()), dp = Tensor::zeros(g.shape());
      for (int64_t b = 0; b < B; ++b) std::copy_n(g.data() + b * row, row, (keep[b] ? dn : dp).data() + b * row);
      next.accumulate_grad(dn);
      previous.accumulate_grad(dp);
    });
  }
  return result;
}

}  // namespace heed
