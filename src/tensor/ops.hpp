#pragma once
// Differentiable ops on Vars. Each op computes its value now and, when a gradient is wanted,
// records its backward function (see autograd.hpp); forward and backward of an op live side by
// side in one file under tensor/ops/. oneDNN runs matmuls, eltwise, softmax and layer norm;
// our own loops do what oneDNN 2.6 lacks (gathers, reductions, dropout, the loss, GRU gates).
#include <cstdint>
#include <memory>
#include <vector>

#include "tensor/autograd.hpp"
#include "tensor/random.hpp"
#include "tensor/tensor.hpp"

namespace heed {

// ---- tensor kernels (no autograd) used by ops, optimizers and decoders ----
// C = op(A)·op(B) (+ C when accumulate). 2-D [M,K]x[K,N], or 3-D batched with equal batch,
// or 3-D A with 2-D B (B shared by the batch). op(X) = Xᵀ when the flag is set (a strided view,
// never a copy). C must be dense with the result's shape.
void matmul_into(const Tensor& c, const Tensor& a, const Tensor& b, bool trans_a, bool trans_b,
                 bool accumulate = false);
void add_into(const Tensor& dst, const Tensor& src);  // dst += src, same shape
void scale_into(const Tensor& dst, float s);          // dst *= s
// Sums a gradient of shape `from` down to the broadcast shape `to` (numpy rules).
Tensor reduce_to_shape(const Tensor& grad, const Shape& to);

// ---- linear algebra ----
Var matmul(const Var& a, const Var& b, bool trans_a = false, bool trans_b = false);
// x[..., I] · wᵀ + bias, w stored [O, I] (PyTorch's layout); bias may be undefined.
Var linear(const Var& x, const Var& w, const Var& bias);

// A weight w [O, I] copied once into oneDNN's blocked layout for x·wᵀ. A matmul with plain
// weights repacks them on every call, which costs as much as the arithmetic when x has few
// rows: a decoding step runs 1.3–1.5× faster at 32 rows with packed weights (measured). The
// layout does not depend on the number of rows. A snapshot: repack after w changes.
struct PackedLayouts;  // the layout `packed` is in, and copies in others (tensor/ops/matmul_dispatch.cpp)
struct PackedWeight {
  Tensor plain;   // w itself, maybe strided (the fallback should oneDNN choose another layout for some shape)
  Tensor packed;  // the blocked copy, an opaque float buffer
  int64_t out = 0, in = 0;
  bool bf16 = false;  // packed in bf16 (made under MatmulPrecision::bf16): products round x to bf16
  // int8 weights (pack_weight_int8): `packed` holds q, w's rows quantized to int8, in the int8
  // product's layout, `int8_rows` the same q row-major (bytes; `plain` is left undefined: an
  // fp32 copy would take four times the memory), `scales` [O] their scales (w[o] ≈
  // scales[o] · q[o]). Products then quantize x per row on the fly: see tensor/quantize.hpp.
  Tensor int8_rows;
  Tensor scales;
  Tensor zero_point_sums;  // [O]: 128 · scales[o] · Σ_i q[o, i], what the u8 activations' zero point adds
  // The layout oneDNN picks depends on the thread count a product's primitive is made for, and a
  // weight packed on one thread is read by others (translate packs on the main thread, then each
  // worker decodes with one thread): a product in another layout gets a copy, made once and
  // shared by the copies of this PackedWeight.
  std::shared_ptr<PackedLayouts> layouts;
  bool is_int8() const { return scales.defined(); }
};
PackedWeight pack_weight(const Tensor& w);  // in matmul_precision() (tensor/precision.hpp)
PackedWeight pack_weight_int8(const Tensor& w);
// The weights a product multiplies by, as fp32 [O, I]: w, or for int8 the dequantized q.
Tensor dequantized_weight(const PackedWeight& w);
// x[..., I] · wᵀ + bias without autograd (decoding); bias may be undefined. Equal to linear()
// up to float rounding (the blocked kernels sum in another order).
Tensor linear(const Tensor& x, const PackedWeight& w, const Tensor& bias);
// Into a dense y; with accumulate, y += x · wᵀ (+ bias).
void linear_into(const Tensor& y, const Tensor& x, const PackedWeight& w, const Tensor& bias, bool accumulate = false);

// A weight used by a product at every step of a recurrence (x_t · wᵀ). Its gradient
// dW += Σ_t g_tᵀ·x_t is done as one matmul over all steps' rows when the last step's backward
// has run, instead of one matmul per step whose inner dimension is only the batch (slow, and
// each rewrites all of dW); and the steps' products run on packed copies of w (PackedWeight),
// made once here for the forward products and at the first backward for dx_t = g_t · w.
// Create it before the loop: its backward is then recorded first and runs after every step's.
class StepWeight {
 public:
  explicit StepWeight(const Var& weight);
  // From a step's backward: g [rows, O], x [rows, I]; both are kept until the flush.
  void add(const Tensor& g, const Tensor& x) const;
  bool is_for(const Var& weight) const;
  const PackedWeight& forward_packed() const;   // w for x · wᵀ
  const PackedWeight& backward_packed() const;  // wᵀ, for g · w

 private:
  struct Pending;
  std::shared_ptr<Pending> pending_;
};
// linear() for a step of a recurrence on `step` (made for w).
Var linear(const Var& x, const Var& w, const Var& bias, const StepWeight& step);

// ---- elementwise, with numpy broadcasting of b to a's shape ----
Var add(const Var& a, const Var& b);
Var sub(const Var& a, const Var& b);
Var mul(const Var& a, const Var& b);
Var scale(const Var& a, float s);
Var tanh(const Var& a);
Var sigmoid(const Var& a);
Var relu(const Var& a);
Var gelu(const Var& a);                              // erf form
Var leaky_relu(const Var& a, float negative_slope);  // x > 0 ? x : negative_slope · x
Var elu(const Var& a);                               // x > 0 ? x : exp(x) − 1

// ---- normalisation along the last axis ----
Var softmax(const Var& a);
Var log_softmax(const Var& a);
Var layer_norm(const Var& x, const Var& gamma, const Var& beta, float eps = 1e-5f);
// x / (‖x‖ + 1e-8) along the last axis (cosine similarity as a product of normalised rows).
Var l2_normalize(const Var& x);

// ---- shape ----
Var reshape(const Var& a, const Shape& shape);
Var permute(const Var& a, const std::vector<int>& axes);  // dense copy in the new order
Var concat(const std::vector<Var>& parts, int axis);
std::vector<Var> split(const Var& a, const std::vector<int64_t>& sizes, int axis);
Var slice_rows(const Var& a, int64_t begin, int64_t end);  // first axis

// ---- lookup, masking, dropout, reductions ----
// table[V, E], ids of any shape → [ids..., E]; backward scatter-adds into the table rows.
Var embedding(const Var& table, const std::vector<int32_t>& ids, const Shape& ids_shape);
// Where mask (0/1, broadcast to x's shape) is 1, the output is `value` and the gradient 0.
Var masked_fill(const Var& x, const Tensor& mask, float value);
// Inverted dropout with probability p; the mask comes from rng (one key per call).
Var dropout(const Var& x, float p, Rng& rng);
// dropout(relu(x), p, rng) in one pass each way (the same mask and values), for feed-forward layers.
Var relu_dropout(const Var& x, float p, Rng& rng);
Var sum(const Var& a);
Var mean(const Var& a);

// ---- the loss ----
struct CrossEntropyStats {
  double nll_sum = 0;   // Σ −log p(label) over counted labels
  double loss_sum = 0;  // label-smoothed, before dividing
  int64_t labels = 0;   // labels not equal to ignore_index
};
// logits[N, V], one target per row. Per counted row: (1−ε)(−log p[y]) + ε/V Σ_k (−log p[k]);
// the result is the sum over counted rows divided by `normalizer` (e.g. the label count).
Var cross_entropy(const Var& logits, const std::vector<int32_t>& targets, int ignore_index, float label_smoothing,
                  float normalizer, CrossEntropyStats* stats = nullptr);

// ---- recurrent and attention kernels ----
// GRU with PyTorch's gate order r, z, n and linear-before-reset:
//   r = σ(gi_r + W_hr h + b_hr), z = σ(gi_z + W_hz h + b_hz), n = tanh(gi_n + r ⊙ (W_hn h + b_hn)),
//   h' = (1 − z) ⊙ n + z ⊙ h.   gi = W_i x + b_i is computed outside (one big matmul).
// One step: gi[B, 3H], h[B, H], w_hh[3H, H], b_hh[3H] → h'[B, H].
Var gru_cell(const Var& gi, const Var& h, const Var& w_hh, const Var& b_hh);
// The gate part of gru_cell alone, for a caller that computes gh = h·W_hhᵀ + b_hh [B, 3H] itself
// (fused with another product of h): gi, gh [B, 3H], h [B, H] → h'.
Var gru_gates(const Var& gi, const Var& gh, const Var& h);
// A whole sequence: gi[B, T, 3H] → outputs [B, T, H], zero at padded positions t ≥ lengths[b].
// gi may also hold the real positions only, packed [Σ lengths, 3H] sentence after sentence (so
// its input projection skips the padding); then T = padded_length.
// reverse = true runs from each sentence's own last token down to 0 (state starts at zero).
// w_hh_packed: a packed copy of w_hh the caller holds (decoding many batches); else packed here.
Var gru_sequence(const Var& gi, const Var& w_hh, const Var& b_hh, const std::vector<int32_t>& lengths, bool reverse,
                 const PackedWeight* w_hh_packed = nullptr, int64_t padded_length = 0);
// Bahdanau scores: e[b, j] = Σ_a v[a] · tanh(query[b, a] + keys[b, j, a]); query [B, A],
// keys [B, S, A], v [1, A] → [B, S]. Fused so that the [B, S, A] tanh is never an autograd node.
// Where pad_mask [B, S] (optional) is nonzero, e is −inf and is not computed.
Var additive_attention_scores(const Var& query, const Var& keys, const Var& v, const Tensor& pad_mask = Tensor());
// Attention contexts c[b] = Σ_j alpha[b, j] · values[b, j]; alpha [B, S], values [B, S, D] →
// [B, D]. Positions with weight exactly 0 (masked) are skipped.
Var attention_context(const Var& alpha, const Var& values);

}  // namespace heed
