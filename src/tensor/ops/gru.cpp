// GRU kernels (PyTorch / oneDNN linear-before-reset equations, gate order r, z, n). The
// recurrent matmul of each step runs on oneDNN; the gate arithmetic is one fused loop, and the
// input projection for all steps is a single matmul done by the caller. Our own loop rather than
// oneDNN's RNN primitive because per-sentence lengths must hold: padded rows neither update the
// state nor emit output, and the reverse direction starts at each sentence's own last token.
#include <algorithm>
#include <cstring>
#include <memory>

#include "tensor/fast_math.hpp"
#include "tensor/ops.hpp"
#include "util/error.hpp"

namespace heed {
namespace {

// Forward gates for one row. gi, gh: 3H (gh includes b_hh). Writes r, z, n, hn and h_new.
inline void gate_forward(int64_t H, const float* gi, const float* gh, const float* h, float* r, float* z, float* n,
                         float* hn, float* h_new) {
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
    throw Error("gru_gates: gi " + shape_str(gi.shape()) + ", gh " + shape_str(gh.shape()) + ", h " +
                shape_str(h.shape()));
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

namespace {

// Rows in order of decreasing length, so that the rows active at a step are a prefix of them:
// forward, those with length > s; reverse, those with length ≥ T − s (each starts at its own end).
struct RowPlan {
  std::vector<int64_t> order;                 // order[i]: the batch row of the i-th longest sentence
  std::vector<int64_t> active, rows, offset;  // per processing step: active rows, rows computed, first slot
  int64_t slots = 0;                          // Σ rows: the kept gate values and states, per step one segment
};

// Recurrent products run on whole blocks of rows, so that a batch brings at most B / kRowBlock
// row counts (each an exact-shape primitive, made once) rather than one per count of active rows.
constexpr int64_t kRowBlock = 8;

RowPlan plan_rows(const std::vector<int32_t>& lengths, int64_t T, bool reverse) {
  const int64_t B = static_cast<int64_t>(lengths.size());
  RowPlan p;
  p.order.resize(B);
  for (int64_t b = 0; b < B; ++b) p.order[b] = b;
  std::stable_sort(p.order.begin(), p.order.end(), [&](int64_t a, int64_t b) { return lengths[a] > lengths[b]; });
  for (int64_t s = 0; s < T; ++s) {
    int64_t n = 0;
    while (n < B && (reverse ? lengths[p.order[n]] >= T - s : lengths[p.order[n]] > s)) ++n;
    p.active.push_back(n);
    p.rows.push_back(std::min(B, (n + kRowBlock - 1) / kRowBlock * kRowBlock));
    p.offset.push_back(p.slots);
    p.slots += p.rows.back();
  }
  return p;
}

// Zeroes rows [length, T) of each sentence b in x [B, T, width]: the padded positions.
void zero_padding(float* x, const std::vector<int32_t>& lengths, int64_t T, int64_t width) {
  for (size_t b = 0; b < lengths.size(); ++b)
    std::memset(x + (b * T + lengths[b]) * width, 0, (T - lengths[b]) * width * sizeof(float));
}
}  // namespace

Var gru_sequence(const Var& gi, const Var& w_hh, const Var& b_hh, const std::vector<int32_t>& lengths, bool reverse,
                 const PackedWeight* w_hh_packed, int64_t padded_length) {
  const bool packed_input = gi.ndim() == 2;
  if (!packed_input && gi.ndim() != 3)
    throw Error("gru_sequence: input must be [B, T, 3H] or packed [N, 3H], got " + shape_str(gi.shape()));
  const int64_t B = static_cast<int64_t>(lengths.size()), T = packed_input ? padded_length : gi.dim(1), H = w_hh.dim(1);
  check_shapes(gi.shape(), H, w_hh, b_hh);
  if (!packed_input && gi.dim(0) != B) throw Error("gru_sequence: one length per sentence needed");
  // The input row of sentence b's position t: b·T + t, or start[b] + t when packed.
  std::vector<int64_t> start(B);
  int64_t real = 0;
  for (int64_t b = 0; b < B; ++b) {
    const int32_t l = lengths[b];
    if (l < 0 || l > T)
      throw Error("gru_sequence: length " + std::to_string(l) + " outside [0, " + std::to_string(T) + "]");
    start[b] = packed_input ? real : b * T;
    real += l;
  }
  if (packed_input && gi.dim(0) != real)
    throw Error("gru_sequence: packed input of " + std::to_string(gi.dim(0)) + " rows for " + std::to_string(real) +
                " positions");
  Tensor giv = gi.value().contiguous();
  Tensor out = Tensor::empty({B, T, H});
  zero_padding(out.data(), lengths, T, H);  // the other rows are written below
  // Padded positions cost nothing: the state h runs in plan.order, and a step multiplies only the
  // prefix of rows still (or already) inside their sentence, rounded up to a block.
  auto plan = std::make_shared<const RowPlan>(plan_rows(lengths, T, reverse));
  // Per step, the state before it and the gate values of its rows, one segment of plan.rows[s]
  // slots each, for the backward; without one (decoding), each step overwrites the same B slots.
  const bool keep = needs_grad({&gi, &w_hh, &b_hh});
  const int64_t slots = keep ? plan->slots : B;
  Tensor h_prev = keep ? Tensor::empty({slots, H}) : Tensor(), r = Tensor::empty({slots, H}),
         z = Tensor::empty({slots, H}), n = Tensor::empty({slots, H}), hn = Tensor::empty({slots, H});
  Tensor h = Tensor::zeros({B, H}), gh = Tensor::empty({B, 3 * H});
  // Used T times with few rows: packed once.
  const PackedWeight w_packed = w_hh_packed ? *w_hh_packed : pack_weight(w_hh.value());
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = reverse ? T - 1 - s : s, active = plan->active[s], rows = plan->rows[s];
    if (rows == 0) continue;
    const int64_t first = keep ? plan->offset[s] : 0;
    if (keep) std::memcpy(h_prev.data() + first * H, h.data(), rows * H * sizeof(float));
    linear_into(gh.slice(0, rows), h.slice(0, rows), w_packed, b_hh.value());  // gh = h · W_hhᵀ + b_hh
#pragma omp parallel for schedule(static) if (active * H >= kParallelGates)
    for (int64_t i = 0; i < active; ++i) {
      const int64_t b = plan->order[i], o = (first + i) * H;
      gate_forward(H, giv.data() + (start[b] + t) * 3 * H, gh.data() + i * 3 * H, h.data() + i * H, r.data() + o,
                   z.data() + o, n.data() + o, hn.data() + o, h.data() + i * H);
      std::memcpy(out.data() + (b * T + t) * H, h.data() + i * H, H * sizeof(float));
    }
  }
  Var result(out, keep);
  if (result.requires_grad()) {
    auto on = result.node_ptr();
    record_backward([gi, w_hh, b_hh, lengths, start, plan, h_prev, r, z, n, hn, on, B, T, H, reverse, packed_input] {
      if (!on->grad.defined()) return;
      Tensor g = on->grad.contiguous();
      Tensor dgi = Tensor::empty(gi.shape());
      if (!packed_input) zero_padding(dgi.data(), lengths, T, 3 * H);
      // dgh per slot; the computed rows beyond a step's active ones stay zero, adding nothing.
      Tensor dgh_all = Tensor::empty({plan->slots, 3 * H});
      Tensor dh = Tensor::zeros({B, H}), dh_prev = Tensor::empty({B, H});         // dh in plan.order
      const PackedWeight w_t_packed = pack_weight(w_hh.value().transpose(0, 1));  // for dgh · W_hh
      for (int64_t s = T - 1; s >= 0; --s) {
        const int64_t t = reverse ? T - 1 - s : s, active = plan->active[s], rows = plan->rows[s];
        if (rows == 0) continue;
        const int64_t first = plan->offset[s];
        float* dgh = dgh_all.data() + first * 3 * H;
        std::memset(dgh + active * 3 * H, 0, (rows - active) * 3 * H * sizeof(float));
        // Rows computed but not active carry their dh through.
        std::memcpy(dh_prev.data() + active * H, dh.data() + active * H, (rows - active) * H * sizeof(float));
#pragma omp parallel for schedule(static) if (active * H >= kParallelGates)
        for (int64_t i = 0; i < active; ++i) {
          const int64_t b = plan->order[i], o = (first + i) * H;
          const float* dout = g.data() + (b * T + t) * H;
          float* d = dh.data() + i * H;
          for (int64_t j = 0; j < H; ++j) d[j] += dout[j];
          gate_backward(H, d, h_prev.data() + o, r.data() + o, z.data() + o, n.data() + o, hn.data() + o,
                        dgi.data() + (start[b] + t) * 3 * H, dgh + i * 3 * H, dh_prev.data() + i * H);
        }
        // dh before the step = direct part + dgh · W_hh
        linear_into(dh_prev.slice(0, rows), dgh_all.slice(first, first + rows), w_t_packed, Tensor(), true);
        std::memcpy(dh.data(), dh_prev.data(), rows * H * sizeof(float));
      }
      gi.accumulate_grad(dgi);
      if (plan->slots > 0) accumulate_param_grads(w_hh, b_hh, dgh_all, h_prev);  // else every sentence is empty
    });
  }
  return result;
}

}  // namespace heed
