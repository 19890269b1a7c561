// GRU kernels (PyTorch / oneDNN linear-before-reset equations, gate order r, z, n). The
// recurrent matmul of each step runs on oneDNN; the gate arithmetic is one fused loop, and the
// input projection for all steps is a single matmul done by the caller. Our own loop rather than
// oneDNN's RNN primitive because per-sentence lengths must hold: padded rows neither update the
// state nor emit output, and the reverse direction starts at each sentence's own last token.
#include <cstring>

#include "tensor/ops.hpp"
#include "tensor/ops/fast_math.hpp"
#include "util/error.hpp"

namespace heed {
namespace {

// Forward gates for one row. gi, gh: 3H (gh includes b_hh). Writes r, z, n, hn and h_new.
inline void gate_forward(int64_t H, const float* gi, const float* gh, const float* h, float* r, float* z,
                         float* n, float* hn, float* h_new) {
#pragma omp simd
  for (int64_t j = 0; j < H; ++j) {
    const float rj = fast_sigmoid(gi[j] + gh[j]);
    const float zj = fast_sigmoid(gi[H + j] + gh[H + j]);
    const float hnj = gh[2 * H + j];
    const float nj = fast_tanh(gi[2 * H + j] + rj * hnj);
    r[j] = rj;
    z[j] = zj;
    n[j] = nj;
    hn[j] = hnj;
    h_new[j] = (1.f - zj) * nj + zj * h[j];
  }
}

// Backward for one row: from dh_new, writes dgi (3H), dgh (3H) and dh_direct = dh_new ⊙ z.
inline void gate_backward(int64_t H, const float* dh_new, const float* h, const float* r, const float* z,
                          const float* n, const float* hn, float* dgi, float* dgh, float* dh_direct) {
#pragma omp simd
  for (int64_t j = 0; j < H; ++j) {
    const float d = dh_new[j];
    const float dn_pre = d * (1.f - z[j]) * (1.f - n[j] * n[j]);
    const float dz_pre = d * (h[j] - n[j]) * z[j] * (1.f - z[j]);
    const float dr_pre = dn_pre * hn[j] * r[j] * (1.f - r[j]);
    dgi[j] = dr_pre;
    dgi[H + j] = dz_pre;
    dgi[2 * H + j] = dn_pre;
    dgh[j] = dr_pre;
    dgh[H + j] = dz_pre;
    dgh[2 * H + j] = dn_pre * r[j];
    dh_direct[j] = d * z[j];
  }
}

void accumulate_param_grads(const Var& w_hh, const Var& b_hh, const Tensor& dgh_rows, const Tensor& h_rows) {
  if (w_hh.requires_grad()) {
    bool fresh = !w_hh.grad().defined();
    Tensor dw = fresh ? Tensor::empty(w_hh.shape()) : w_hh.grad();
    matmul_into(dw, dgh_rows, h_rows, true, false, !fresh);
    if (fresh) w_hh.accumulate_grad(dw);
  }
  if (b_hh.requires_grad()) {
    const int64_t rows = dgh_rows.dim(0), cols = dgh_rows.dim(1);
    Tensor db = Tensor::zeros({cols});
    const float* p = dgh_rows.data();
    for (int64_t i = 0; i < rows; ++i)
#pragma omp simd
      for (int64_t j = 0; j < cols; ++j) db.data()[j] += p[i * cols + j];
    b_hh.accumulate_grad(db.reshape(b_hh.shape()));
  }
}

// Gate values per call from which a second thread pays for its start.
constexpr int64_t kParallelGates = 1 << 14;

// t [rows, cols] itself when its columns are dense (rows may be strided), else a dense copy.
Tensor dense_rows(const Tensor& t) { return t.ndim() == 2 && t.strides()[1] == 1 ? t : t.contiguous(); }

void check_shapes(const Shape& gi, int64_t H, const Var& w_hh, const Var& b_hh) {
  if (gi.back() != 3 * H || w_hh.dim(0) != 3 * H || w_hh.dim(1) != H || b_hh.value().numel() != 3 * H)
    throw Error("gru: input " + shape_str(gi) + " with recurrent weight " + shape_str(w_hh.shape()));
}
}  // namespace

Var gru_cell(const Var& gi, const Var& h, const Var& w_hh, const Var& b_hh) {
  check_shapes(gi.shape(), h.dim(1), w_hh, b_hh);
  return gru_gates(gi, linear(h, w_hh, b_hh), h);
}

Var gru_gates(const Var& gi, const Var& gh, const Var& h) {
  const int64_t B = h.dim(0), H = h.dim(1);
  if (gi.shape() != Shape{B, 3 * H} || gh.shape() != Shape{B, 3 * H})
    throw Error("gru_gates: gi " + shape_str(gi.shape()) + ", gh " + shape_str(gh.shape()) + ", h " + shape_str(h.shape()));
  // gi and gh are often column ranges of wider products: their rows are read where they lie.
  const Tensor giv = dense_rows(gi.value()), ghv = dense_rows(gh.value()), hv = h.value().contiguous();
  const int64_t gi_stride = giv.strides()[0], gh_stride = ghv.strides()[0];
  Tensor r = Tensor::empty({B, H}), z = Tensor::empty({B, H}), n = Tensor::empty({B, H}), hn = Tensor::empty({B, H});
  Tensor out = Tensor::empty({B, H});
#pragma omp parallel for schedule(static) if (B * H >= kParallelGates)
  for (int64_t b = 0; b < B; ++b)
    gate_forward(H, giv.data() + b * gi_stride, ghv.data() + b * gh_stride, hv.data() + b * H, r.data() + b * H,
                 z.data() + b * H, n.data() + b * H, hn.data() + b * H, out.data() + b * H);
  Var result(out, needs_grad({&gi, &gh, &h}));
  if (result.requires_grad()) {
    auto on = result.node_ptr();
    record_backward([gi, gh, h, hv, r, z, n, hn, on, B, H] {
      if (!on->grad.defined()) return;
      Tensor g = on->grad.contiguous();
      Tensor dgi = Tensor::empty({B, 3 * H}), dgh = Tensor::empty({B, 3 * H}), dh = Tensor::empty({B, H});
#pragma omp parallel for schedule(static) if (B * H >= kParallelGates)
      for (int64_t b = 0; b < B; ++b)
        gate_backward(H, g.data() + b * H, hv.data() + b * H, r.data() + b * H, z.data() + b * H, n.data() + b * H,
                      hn.data() + b * H, dgi.data() + b * 3 * H, dgh.data() + b * 3 * H, dh.data() + b * H);
      gi.accumulate_grad(dgi);
      gh.accumulate_grad(dgh);
      h.accumulate_grad(dh);
    });
  }
  return result;
}

Var gru_sequence(const Var& gi, const Var& w_hh, const Var& b_hh, const std::vector<int32_t>& lengths,
                 bool reverse, const PackedWeight* w_hh_packed) {
  if (gi.ndim() != 3) throw Error("gru_sequence: input must be [B, T, 3H], got " + shape_str(gi.shape()));
  const int64_t B = gi.dim(0), T = gi.dim(1), H = w_hh.dim(1);
  check_shapes(gi.shape(), H, w_hh, b_hh);
  if (static_cast<int64_t>(lengths.size()) != B) throw Error("gru_sequence: one length per sentence needed");
  for (auto l : lengths)
    if (l < 0 || l > T) throw Error("gru_sequence: length " + std::to_string(l) + " outside [0, " + std::to_string(T) + "]");
  Tensor giv = gi.value().contiguous();
  Tensor out = Tensor::empty({B, T, H});  // each row is written below, a padded one with zeros
  // Per processing step s: the state before it and the gate values, [T, B, H] each, for the
  // backward; without one (decoding), one step's gate values are overwritten by the next.
  const bool keep = needs_grad({&gi, &w_hh, &b_hh});
  const int64_t kept_steps = keep ? T : 1;
  Tensor h_prev = keep ? Tensor::empty({T, B, H}) : Tensor(), r = Tensor::empty({kept_steps, B, H}),
         z = Tensor::empty({kept_steps, B, H}), n = Tensor::empty({kept_steps, B, H}),
         hn = Tensor::empty({kept_steps, B, H});
  Tensor h = Tensor::zeros({B, H}), gh = Tensor::empty({B, 3 * H});
  // Used T times with only B rows: packed once.
  const PackedWeight w_packed = w_hh_packed ? *w_hh_packed : pack_weight(w_hh.value());
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = reverse ? T - 1 - s : s;
    const int64_t slot = keep ? s : 0;
    if (keep) std::memcpy(h_prev.data() + s * B * H, h.data(), B * H * sizeof(float));
    linear_into(gh, h, w_packed, b_hh.value());  // gh = h · W_hhᵀ + b_hh
#pragma omp parallel for schedule(static) if (B * H >= kParallelGates)
    for (int64_t b = 0; b < B; ++b) {
      if (t >= lengths[b]) {
        std::memset(out.data() + (b * T + t) * H, 0, H * sizeof(float));
        continue;
      }
      const int64_t o = (slot * B + b) * H;
      gate_forward(H, giv.data() + (b * T + t) * 3 * H, gh.data() + b * 3 * H, h.data() + b * H, r.data() + o,
                   z.data() + o, n.data() + o, hn.data() + o, h.data() + b * H);
      std::memcpy(out.data() + (b * T + t) * H, h.data() + b * H, H * sizeof(float));
    }
  }
  Var result(out, keep);
  if (result.requires_grad()) {
    auto on = result.node_ptr();
    record_backward([gi, w_hh, b_hh, lengths, h_prev, r, z, n, hn, on, B, T, H, reverse] {
      if (!on->grad.defined()) return;
      Tensor g = on->grad.contiguous();
      // Every row of both is written below, an inactive one with zeros.
      Tensor dgi = Tensor::empty({B, T, 3 * H});
      Tensor dgh_all = Tensor::empty({T, B, 3 * H});
      Tensor dh = Tensor::zeros({B, H}), dh_next = Tensor::empty({B, H}), d_total = Tensor::empty({B, H});
      const PackedWeight w_t_packed = pack_weight(w_hh.value().transpose(0, 1));  // for dgh · W_hh
      for (int64_t s = T - 1; s >= 0; --s) {
        const int64_t t = reverse ? T - 1 - s : s;
        float* dgh = dgh_all.data() + s * B * 3 * H;
        std::memcpy(dh_next.data(), dh.data(), B * H * sizeof(float));  // inactive rows carry dh through
#pragma omp parallel for schedule(static) if (B * H >= kParallelGates)
        for (int64_t b = 0; b < B; ++b) {
          if (t >= lengths[b]) {
            std::memset(dgi.data() + (b * T + t) * 3 * H, 0, 3 * H * sizeof(float));
            std::memset(dgh + b * 3 * H, 0, 3 * H * sizeof(float));
            continue;
          }
          const int64_t o = (s * B + b) * H;
          const float* dout = g.data() + (b * T + t) * H;
          float* dhb = dh.data() + b * H;
          float* d = d_total.data() + b * H;
          for (int64_t j = 0; j < H; ++j) d[j] = dout[j] + dhb[j];
          gate_backward(H, d, h_prev.data() + o, r.data() + o, z.data() + o, n.data() + o,
                        hn.data() + o, dgi.data() + (b * T + t) * 3 * H, dgh + b * 3 * H, dh_next.data() + b * H);
        }
        // dh_{prev} = direct part + dgh · W_hh (dgh is zero on inactive rows)
        linear_into(dh_next, dgh_all.slice(s, s + 1).reshape({B, 3 * H}), w_t_packed, Tensor(), true);
        std::swap(dh, dh_next);
      }
      gi.accumulate_grad(dgi);
      accumulate_param_grads(w_hh, b_hh, dgh_all.reshape({T * B, 3 * H}), h_prev.reshape({T * B, H}));
    });
  }
  return result;
}

}  // namespace heed
