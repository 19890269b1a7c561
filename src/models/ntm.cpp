// Neural Turing Machine (Graves, Wayne & Danihelka 2014) as a sequence-to-sequence model: one
// controller reads and writes an N × W memory through R read and W_h write heads, first over the
// source tokens (encoding), then, from the state it reached, over the target tokens (decoding).
//
//   x_t   = E_src[source token] while encoding, E_tgt[previous target token] while decoding
//   h_t   = GRU([x_t ; r_{t−1}], h_{t−1})                 the controller (PyTorch GRUCell gates)
//   per head, from [k ; β̂ ; ĝ ; ŝ ; γ̂ ; (ê ; â)] = one linear map of h_t (all heads' maps stacked):
//     w^c = softmax_i(β · cos(k, M_i)),  β = softplus(β̂)  content: nn/attention's CosineScore
//     w^g = g w^c + (1 − g) w_{t−1},     g = σ(ĝ)         interpolation
//     w̃_i = Σ_k s_k w^g_{i−k mod N},     s = softmax(ŝ)   shifts −K .. K (K = shift_width)
//     w_i  = w̃_i^γ / Σ_j w̃_j^γ,          γ = 1 + softplus(γ̂)   sharpening
//   write heads, in turn: M ← M ∘ (1 − w eᵀ) + w aᵀ,  e = σ(ê), a = tanh(â)
//   read heads, on the written memory: r_t = [Σ_i w_i M_i per head]
//   p(y_t | y_<t, x) = softmax(W_out [h_t ; r_t] + b_out)          decoding steps only
//
// Initial state: h_0 = 0, M_0 = a learned bias or 1e-6 (the same for every sentence), every head's w_0
// the one-hot weight on row 0 (a fixed start for the shifts), r_0 = reads of M_0 with w_0.
// Encoding stops each sentence at its own last token (</s>): at padded positions the whole
// state is carried over unchanged (select_rows), so padding never changes a result.
//
// Parameters (E emb, H controller, N × W memory, R read / A write heads, K = 2·shift_width + 1,
// per head P_r = W + 3 + K, P_w = P_r + 2W):
//   V_src·E + V_tgt·E                 embeddings (one table when shared)
//   + 3H(E + RW) + 3H·H + 6H          controller GRU
//   + (H + 1)(R·P_r + A·P_w)          head parameters
//   + N·W                             initial memory (when learned)
//   + (H + RW)·V_tgt + V_tgt          output
#include "models/ntm.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <string>

#include "nn/attention.hpp"
#include "nn/layers.hpp"
#include "tensor/memory_ops.hpp"
#include "util/error.hpp"

namespace heed {
namespace {

// The recurrence as Vars: forward() records it on the tape, step() runs it without gradients.
struct Recurrent {
  Var h;                     // [B, H]
  Var memory;                // [B, N, W]
  Var reads;                 // [B, R·W]
  std::vector<Var> weights;  // per head (read heads first) [B, N]
  std::vector<Var> all() const {
    std::vector<Var> v = {h, memory, reads};
    v.insert(v.end(), weights.begin(), weights.end());
    return v;
  }
  static Recurrent from(const std::vector<Var>& v) {
    return {v[0], v[1], v[2], std::vector<Var>(v.begin() + 3, v.end())};
  }
};

struct NtmState : DecoderState {
  std::vector<Tensor> tensors;  // Recurrent::all(), values only
};

class Ntm : public Seq2Seq {
 public:
  Ntm(const ModelConfig& config, int src_vocab, int tgt_vocab, uint64_t seed)
      : Seq2Seq(seed), c_(config.ntm), src_vocab_(src_vocab), tgt_vocab_(tgt_vocab) {
    const int E = c_.emb_dim, H = c_.controller_hidden, N = c_.memory_rows, W = c_.memory_width;
    const int RW = c_.read_heads * W;
    Rng init(seed);
    std::tie(src_emb_, tgt_emb_) =
        source_target_embeddings(params_, src_vocab, tgt_vocab, E, config.share_embeddings, init);
    controller_ = GruWeights(params_, "controller", "", E + RW, H, init);
    heads_ = Linear(params_, "heads", H, c_.read_heads * read_size() + c_.write_heads * write_size(), true, init);
    // Learned: distinct rows from the start, so that content addressing can tell locations apart.
    // Constant: every row alike, so the heads must find places by location first (Collier & Beel
    // 2018 report that this learns copy faster).
    memory_init_ = c_.learned_memory
                       ? params_.add("memory.bias", uniform_tensor({N, W}, 1.f / std::sqrt(static_cast<float>(W)), init))
                       : Var(Tensor::full({N, W}, 1e-6f));
    out_ = Linear(params_, "out", H + RW, tgt_vocab, true, init);
  }

  std::string arch() const override { return "ntm"; }
  int source_vocab() const override { return src_vocab_; }
  int target_vocab() const override { return tgt_vocab_; }
  int memory_rows() const override { return c_.memory_rows; }
  Tensor last_attention() const override { return last_attention_; }

  // The controller runs over the source; states are its outputs h_j (held at a sentence's last
  // value over its padding), `recurrent` the whole state after each sentence's </s>.
  EncoderOutput encode(const Batch& batch) override {
    const int B = batch.size, S = batch.src_len;
    Recurrent r = initial(B);
    Var x = src_emb_(time_major(batch.src, B, S), {S, B});  // [S, B, E]
    std::vector<Var> outputs;
    for (int t = 0; t < S; ++t) {
      std::vector<uint8_t> keep(B);
      bool all = true;
      for (int b = 0; b < B; ++b) all &= (keep[b] = t < batch.src_lengths[b]) != 0;
      Recurrent next = cell(r, at(x, t));
      if (!all) {
        std::vector<Var> kept, n = next.all(), p = r.all();
        for (size_t i = 0; i < n.size(); ++i) kept.push_back(select_rows(keep, n[i], p[i]));
        next = Recurrent::from(kept);
      }
      r = next;
      outputs.push_back(reshape(r.h, {B, 1, c_.controller_hidden}));
    }
    EncoderOutput out;
    out.states = concat(outputs, 1);
    out.src_lengths = batch.src_lengths;
    out.batch = B;
    out.src_len = S;
    out.recurrent = r.all();
    return out;
  }

  Var forward(const Batch& batch) override {
    const int B = batch.size, T = batch.tgt_len;
    Recurrent r = Recurrent::from(encode(batch).recurrent);
    Var y = tgt_emb_(time_major(batch.tgt_in, B, T), {T, B});  // [T, B, E]
    std::vector<Var> outputs;
    std::vector<Tensor> attention;
    for (int t = 0; t < T; ++t) {
      r = cell(r, at(y, t));
      outputs.push_back(reshape(concat({r.h, r.reads}, -1), {B, 1, -1}));
      attention.push_back(r.weights[0].value());
    }
    keep_attention(attention, B, T);
    return out_(concat(outputs, 1));  // [B, T, V]
  }

  std::unique_ptr<DecoderState> start(const EncoderOutput& enc) override {
    auto st = std::make_unique<NtmState>();
    st->rows = enc.batch;
    for (const Var& v : enc.recurrent) st->tensors.push_back(v.value());
    return st;
  }

  StepOutput step(DecoderState& state, const std::vector<int32_t>& previous) override {
    NoGradGuard no_grad;
    auto& st = static_cast<NtmState&>(state);
    if (static_cast<int>(previous.size()) != st.rows)
      throw Error("ntm step: " + std::to_string(previous.size()) + " tokens for " + std::to_string(st.rows) + " rows");
    std::vector<Var> vars;
    for (const Tensor& t : st.tensors) vars.emplace_back(t);
    Recurrent r = cell(Recurrent::from(vars), tgt_emb_(previous, {st.rows}));
    st.tensors.clear();
    for (const Var& v : r.all()) st.tensors.push_back(v.value());
    return {out_(concat({r.h, r.reads}, -1)).value(), r.weights[0].value()};
  }

  // Every part of the state is per row: memory, head weights, reads and controller follow the beams.
  void reorder(DecoderState& state, const std::vector<int32_t>& rows) override {
    auto& st = static_cast<NtmState&>(state);
    for (Tensor& t : st.tensors) t = gather_rows(t, rows);
    st.rows = static_cast<int>(rows.size());
  }

 private:
  int shifts() const { return 2 * c_.shift_width + 1; }
  int read_size() const { return c_.memory_width + 3 + shifts(); }      // k, β̂, ĝ, ŝ, γ̂
  int write_size() const { return read_size() + 2 * c_.memory_width; }  // + ê, â

  // ids [B, T] → [T, B], so that each step's embeddings are contiguous rows.
  static std::vector<int32_t> time_major(const std::vector<int32_t>& ids, int B, int T) {
    std::vector<int32_t> out(ids.size());
    for (int b = 0; b < B; ++b)
      for (int t = 0; t < T; ++t) out[static_cast<size_t>(t) * B + b] = ids[static_cast<size_t>(b) * T + t];
    return out;
  }
  // Step t of x [T, B, E] as [B, E].
  static Var at(const Var& x, int t) { return reshape(slice_rows(x, t, t + 1), {x.dim(1), x.dim(2)}); }

  Recurrent initial(int B) {
    const int N = c_.memory_rows, W = c_.memory_width;
    Recurrent r;
    r.h = Var(Tensor::zeros({B, c_.controller_hidden}));
    r.memory = add(Var(Tensor::zeros({B, N, W})), memory_init_);
    Tensor first_row = Tensor::zeros({B, N});
    for (int b = 0; b < B; ++b) first_row.data()[b * N] = 1.f;
    r.weights.assign(c_.read_heads + c_.write_heads, Var(first_row));
    std::vector<Var> reads(c_.read_heads, attention_context(r.weights[0], r.memory));
    r.reads = concat(reads, -1);
    return r;
  }

  // One head's weights from its addressing parameters p = [k ; β̂ ; ĝ ; ŝ ; γ̂], its previous
  // weights and the memory it addresses.
  Var address(const Var& p, const Var& previous, const Var& memory) const {
    const int64_t B = p.dim(0), W = c_.memory_width;
    auto part = split(p, {W, 1, 1, shifts(), 1}, 1);
    const Var beta = reshape(softplus(part[1]), {B});
    Var content = attention::coefficients(attention::CosineScore{part[0], memory, beta}, attention::DenseKeys{});
    Var gated = add(previous, mul(sub(content, previous), sigmoid(part[2])));
    Var shifted = circular_shift(gated, softmax(part[3]));
    return sharpen(shifted, add(softplus(part[4]), Var(Tensor::full({1}, 1.f))));
  }

  Recurrent cell(const Recurrent& r, const Var& x) const {
    const int64_t W = c_.memory_width, R = c_.read_heads;
    Recurrent next;
    next.h = gru_cell(linear(concat({x, r.reads}, -1), controller_.weight_ih, controller_.bias_ih), r.h,
                      controller_.weight_hh, controller_.bias_hh);
    std::vector<int64_t> sizes(R, read_size());
    sizes.insert(sizes.end(), c_.write_heads, write_size());
    auto p = split(heads_(next.h), sizes, 1);
    next.weights.resize(r.weights.size());
    next.memory = r.memory;
    for (int64_t i = R; i < static_cast<int64_t>(p.size()); ++i) {
      auto ea = split(p[i], {read_size(), W, W}, 1);
      next.weights[i] = address(ea[0], r.weights[i], next.memory);
      next.memory = memory_write(next.memory, next.weights[i], sigmoid(ea[1]), tanh(ea[2]));
    }
    std::vector<Var> reads;
    for (int64_t i = 0; i < R; ++i) {
      next.weights[i] = address(p[i], r.weights[i], next.memory);
      reads.push_back(attention_context(next.weights[i], next.memory));
    }
    next.reads = R == 1 ? reads[0] : concat(reads, -1);
    return next;
  }

  void keep_attention(const std::vector<Tensor>& steps, int B, int T) {
    const int N = c_.memory_rows;
    last_attention_ = Tensor::empty({B, T, N});
    for (int t = 0; t < T; ++t)
      for (int b = 0; b < B; ++b)
        std::copy(steps[t].data() + b * N, steps[t].data() + (b + 1) * N, last_attention_.data() + (b * T + t) * N);
  }

  NtmConfig c_;
  int src_vocab_, tgt_vocab_;
  Embedding src_emb_, tgt_emb_;
  GruWeights controller_;
  Linear heads_, out_;
  Var memory_init_;
  Tensor last_attention_;
};

}  // namespace

std::unique_ptr<Seq2Seq> make_ntm(const ModelConfig& config, int src_vocab, int tgt_vocab, uint64_t seed) {
  return std::make_unique<Ntm>(config, src_vocab, tgt_vocab, seed);
}

int64_t ntm_parameter_count(const ModelConfig& config, int src_vocab, int tgt_vocab) {
  const NtmConfig& c = config.ntm;
  const int64_t E = c.emb_dim, H = c.controller_hidden, N = c.memory_rows, W = c.memory_width, R = c.read_heads,
                A = c.write_heads, K = 2 * c.shift_width + 1;
  const int64_t read = W + 3 + K, write = read + 2 * W;
  int64_t n = (config.share_embeddings ? src_vocab : src_vocab + tgt_vocab) * E;
  n += 3 * H * (E + R * W) + 3 * H * H + 6 * H;
  n += (H + 1) * (R * read + A * write);
  if (c.learned_memory) n += N * W;
  n += (H + R * W) * tgt_vocab + tgt_vocab;
  return n;
}

}  // namespace heed
