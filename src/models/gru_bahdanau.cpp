// GRU encoder–decoder with additive attention (Bahdanau, Cho & Bengio 2015), equal to the
// PyTorch reference model (BahdanauGRU), parameter names included.
//
//   x_j, y_t          source ids + </s>; decoder inputs <s> + target ids
//   h_j  = [→h_j ; ←h_j]                 bidirectional GRU over drop(Esrc[x]); each direction runs
//                                         over the sentence's real tokens only (←h starts at </s>)
//   s_0  = tanh(W_init · (1/|x|) Σ_j h_j + b_init)
//   e_t  = drop(Etgt[y_{t−1}])           (the same dropped vector feeds the cell and the readout)
//   a_tj = v_aᵀ tanh(W_a s_{t−1} + b_a + U_a h_j)      U_a h_j once per sentence
//   α_t  = softmax_j(a_t) over real source positions,  c_t = Σ_j α_tj h_j
//   s_t  = GRU([e_t ; c_t], s_{t−1})      (PyTorch GRUCell: gates r, z, n; linear-before-reset)
//   o_t  = tanh(W_o [s_t ; c_t ; e_t] + b_o)             (readout_act "linear": no tanh)
//   p(y_t | y_<t, x) = softmax(W_out drop(o_t) + b_out)  (tie_output: W_out = Etgt, needs L = E)
//
// Parameters (E emb, H enc_hidden, D dec_hidden, A attn_dim, L readout_dim, V vocabularies, one
// encoder layer; a further layer l adds 2·(3H(2H+H) + 6H)):
//   V_src·E + V_tgt·E                     embeddings (one table when shared)
//   + 2·(3H(E+H) + 6H)                    encoder GRU, two directions
//   + 2H·D + D                            W_init, b_init
//   + 2H·A + D·A + A + A                  U_a, W_a, b_a, v_a
//   + 3D(E+2H+D) + 6D                     decoder GRU cell
//   + (D+2H+E)·L + L                      W_o, b_o
//   + L·V_tgt + V_tgt                     W_out, b_out (tied: b_out only)
//
// Speed: the input projections of the encoder GRUs and of the decoder's e_t run as one matmul
// over all positions; only the c_t part and the recurrent part run per step. The vocabulary
// projection runs once over all B·T positions. In step(), the e_t parts of the GRU input and of
// the readout are rows of tables made once per set of step weights (GruStepWeights), and their
// c_t parts are weighted sums of the annotations' products, made once per batch.
#include "models/gru_bahdanau.hpp"

#include <cmath>
#include <tuple>
#include <numeric>

#include "models/additive_attention_step.hpp"
#include "nn/attention.hpp"
#include "nn/layers.hpp"
#include "util/error.hpp"

namespace heed {
namespace {

// The step's weights: [att_query; cell.weight_hh] with its bias (both products of s_{t-1} in
// one: a step has no autograd, so its columns are read in place), packed. The parts of
// cell.weight_ih and of readout that multiply the previous token's embedding are applied to
// every target embedding once (a row per token, biases included), so a step looks them up.
// The parts that multiply the context c_t are applied to every annotation h_j once per batch
// (start()): c_t is a weighted mean of the h_j, so W·c_t = Σ_j α_tj (W·h_j), and a step sums
// S rows per beam row instead of multiplying c_t by 2H × (3D + L) weights. With beams, a
// sentence's K rows share those S rows.
struct GruStepWeights {
  PackedWeight state_w;
  Tensor state_b;
  Tensor by_token;               // [V, 3D + L]: [W_ih,e · E_tgt[v] + b_ih ; W_o,e · E_tgt[v] + b_o]
  Tensor by_context;             // [3D + L, 2H]: [W_ih,c ; W_o,c]
  PackedWeight readout_state_w;  // W_o,s [L, D]
  PackedWeight out_w;
};

// Columns [begin, end) of a 2-D tensor, as a view.
Tensor columns(const Tensor& t, int64_t begin, int64_t end) {
  return t.transpose(0, 1).slice(begin, end).transpose(0, 1);
}

// Beam rows share their sentence's encoder rows (source_row), so reorder() only moves s.
struct GruState : DecoderState {
  Tensor s;                                       // [N, D]
  std::vector<int32_t> source_row;                // [N]: the encoder row (sentence) of each row
  Tensor keys;                                    // [B, S, A]
  Tensor projected;                               // [B, S, 3D + L]: by_context · h_j
  Tensor pad_mask;                                // [B, S]
  std::shared_ptr<const GruStepWeights> weights;  // held by the model, or prepared by start()
};

class GruBahdanau : public Seq2Seq {
 public:
  GruBahdanau(const ModelConfig& config, int src_vocab, int tgt_vocab, uint64_t seed)
      : Seq2Seq(seed), c_(config.gru), dropout_(config.dropout), src_vocab_(src_vocab), tgt_vocab_(tgt_vocab) {
    const int E = c_.emb_dim, H = c_.enc_hidden, D = c_.dec_hidden, A = c_.attn_dim, L = c_.readout_dim;
    Rng init(seed);
    std::tie(src_emb_, tgt_emb_) =
        source_target_embeddings(params_, src_vocab, tgt_vocab, E, config.share_embeddings, init);
    for (int l = 0; l < c_.enc_layers; ++l) {
      const int in = l == 0 ? E : 2 * H;
      const std::string suffix = "_l" + std::to_string(l);
      enc_fwd_.emplace_back(params_, "encoder", suffix, in, H, init);
      enc_bwd_.emplace_back(params_, "encoder", suffix + "_reverse", in, H, init);
    }
    init_state_ = Linear(params_, "init_state", 2 * H, D, true, init);
    att_query_ = Linear(params_, "att_query", D, A, true, init);
    att_key_ = Linear(params_, "att_key", 2 * H, A, false, init);
    att_v_ = Linear(params_, "att_v", A, 1, false, init);
    cell_ = GruWeights(params_, "cell", "", E + 2 * H, D, init);
    readout_ = Linear(params_, "readout", D + 2 * H + E, L, true, init);
    if (c_.tie_output) {
      if (L != E) throw UsageError("model.gru.tie_output needs model.gru.readout_dim == model.gru.emb_dim");
      out_.weight = tgt_emb_.weight;
      const float bound = 1.f / std::sqrt(static_cast<float>(L));
      out_.bias = params_.add("out.bias", uniform_tensor({tgt_vocab}, bound, init));
      params_.alias("out.weight", config.share_embeddings ? "src_emb.weight" : "tgt_emb.weight");
    } else {
      out_ = Linear(params_, "out", L, tgt_vocab, true, init);
    }
  }

  std::string arch() const override { return "gru-bahdanau"; }
  int source_vocab() const override { return src_vocab_; }
  int target_vocab() const override { return tgt_vocab_; }
  Tensor last_attention() const override { return last_attention_; }

  EncoderOutput encode(const Batch& batch) override {
    const int B = batch.size, S = batch.src_len;
    // The first layer's input holds the real positions only, [Σ lengths, E], so that neither its
    // embedding, dropout nor input projections spend anything on padding.
    std::vector<int32_t> real_ids;
    for (int b = 0; b < B; ++b)
      real_ids.insert(real_ids.end(), batch.src.begin() + b * S, batch.src.begin() + b * S + batch.src_lengths[b]);
    const int64_t N = static_cast<int64_t>(real_ids.size());
    Var x = drop(src_emb_(real_ids, {N}), dropout_);
    const bool held = !held_encoder_w_hh_.empty();
    for (size_t l = 0; l < enc_fwd_.size(); ++l) {
      Var fwd = run_direction(x, enc_fwd_[l], batch.src_lengths, S, false, held ? &held_encoder_w_hh_[2 * l] : nullptr);
      Var bwd =
          run_direction(x, enc_bwd_[l], batch.src_lengths, S, true, held ? &held_encoder_w_hh_[2 * l + 1] : nullptr);
      x = concat({fwd, bwd}, -1);
    }
    EncoderOutput out;
    out.states = x;
    out.src_lengths = batch.src_lengths;
    out.batch = B;
    out.src_len = S;
    return out;
  }

  Var forward(const Batch& batch) override {
    const int B = batch.size, T = batch.tgt_len, E = c_.emb_dim, D = c_.dec_hidden;
    const int H2 = 2 * c_.enc_hidden;
    EncoderOutput enc = encode(batch);
    Var keys = att_key_(enc.states);
    Var s = initial_state(enc);
    Tensor mask = enc.pad_mask();
    // Decoder inputs, time-major so that each step's rows are contiguous.
    Var y = drop(tgt_emb_(batch.tgt_in, {B, T}), dropout_);            // [B, T, E]
    auto w_ih = split(cell_.weight_ih, {E, H2}, 1);                    // [3D, E], [3D, 2H]
    Var gi_y = linear(permute(y, {1, 0, 2}), w_ih[0], cell_.bias_ih);  // [T, B, 3D]
    // The per-step products: packed weights, weight gradients as one matmul over all steps. The
    // two products of s_{t-1} (attention query, W_hh·s) run apart here, unlike in step(): one
    // product split in two cost a copy of both parts forward and backward, more than the
    // second call (exact-shape primitives run [80, 512]·[512, 512 + 1536] as fast apart).
    const StepWeight query_step(att_query_.weight), recurrent_step(cell_.weight_hh), context_step(w_ih[1]);
    std::vector<Var> states, contexts;
    std::vector<Tensor> attention;
    for (int t = 0; t < T; ++t) {
      Var gh = linear(s, cell_.weight_hh, cell_.bias_hh, recurrent_step);
      Tensor alpha;
      Var c = attend(linear(s, att_query_.weight, att_query_.bias, query_step), enc.states, keys, mask, &alpha);
      Var gi = add(reshape(slice_rows(gi_y, t, t + 1), {B, 3 * D}), linear(c, w_ih[1], Var(), context_step));
      s = gru_gates(gi, gh, s);
      states.push_back(reshape(s, {B, 1, D}));
      contexts.push_back(reshape(c, {B, 1, H2}));
      attention.push_back(alpha);
    }
    keep_attention(attention, B, T, batch.src_len);
    Var readout = activate_readout(readout_(concat({concat(states, 1), concat(contexts, 1), y}, -1)));
    return out_(drop(readout, dropout_));  // [B, T, V]
  }

  std::unique_ptr<DecoderState> start(const EncoderOutput& enc) override {
    NoGradGuard no_grad;
    auto st = std::make_unique<GruState>();
    st->rows = enc.batch;
    st->weights = held_ ? held_ : step_weights();
    st->keys = att_key_(enc.states).value();
    st->projected = linear(enc.states, Var(st->weights->by_context), Var()).value();
    st->s = initial_state(enc).value();
    st->pad_mask = enc.pad_mask();
    st->source_row.resize(enc.batch);
    std::iota(st->source_row.begin(), st->source_row.end(), 0);
    return st;
  }

  // Holding also packs the encoder's recurrent weights once (start() alone does not need them).
  bool has_step_weights() const override { return true; }

  void hold_step_weights(bool on) override {
    held_ = on ? step_weights() : nullptr;
    held_encoder_w_hh_.clear();
    if (!on) return;
    for (size_t l = 0; l < enc_fwd_.size(); ++l)
      for (const GruWeights* direction : {&enc_fwd_[l], &enc_bwd_[l]})
        held_encoder_w_hh_.push_back(pack_step_weight(direction->weight_hh.value()));
  }

  StepOutput step(DecoderState& state, const std::vector<int32_t>& previous) override {
    NoGradGuard no_grad;
    auto& st = static_cast<GruState&>(state);
    if (static_cast<int>(previous.size()) != st.rows)
      throw Error("gru step: " + std::to_string(previous.size()) + " tokens for " + std::to_string(st.rows) + " rows");
    const GruStepWeights& w = *st.weights;
    const int D3 = 3 * c_.dec_hidden;
    // Column ranges are read in place (both consumers take strided rows), not split into copies.
    const Tensor query_gh = linear(st.s, w.state_w, w.state_b);
    // [GRU input ; readout] without their state parts: the token's rows plus Σ_j α_j · projected_j.
    Tensor mixed = gather_rows(w.by_token, previous);  // also checks the token ids
    Tensor alpha;
    additive_attention_step(columns(query_gh, 0, c_.attn_dim), st.keys, att_v_.weight.value(), st.projected,
                            st.pad_mask, st.source_row, alpha, mixed);
    Var s = gru_gates(Var(columns(mixed, 0, D3)), Var(columns(query_gh, c_.attn_dim, c_.attn_dim + D3)), Var(st.s));
    st.s = s.value();
    Tensor o = linear(st.s, w.readout_state_w, Tensor());
    add_into(o, columns(mixed, D3, D3 + c_.readout_dim));
    Var readout = activate_readout(Var(o));
    return {linear(readout.value(), w.out_w, out_.bias.value()), alpha};
  }

  void reorder(DecoderState& state, const std::vector<int32_t>& rows) override {
    auto& st = static_cast<GruState&>(state);
    st.s = gather_rows(st.s, rows);
    st.source_row = gather_rows(st.source_row, rows);
    st.rows = static_cast<int>(rows.size());
  }

 private:
  std::shared_ptr<const GruStepWeights> step_weights() const {
    NoGradGuard no_grad;
    const int64_t E = c_.emb_dim, D = c_.dec_hidden, H2 = 2 * c_.enc_hidden;
    auto w = std::make_shared<GruStepWeights>();
    w->state_w = pack_step_weight(concat({att_query_.weight, cell_.weight_hh}, 0).value());
    w->state_b = concat({att_query_.bias, cell_.bias_hh}, 0).value();
    auto w_ih = split(cell_.weight_ih, {E, H2}, 1);    // [3D, E], [3D, 2H]: input [e; c]
    auto w_o = split(readout_.weight, {D, H2, E}, 1);  // [L, D], [L, 2H], [L, E]: input [s; c; e]
    w->by_token =
        concat({linear(tgt_emb_.weight, w_ih[0], cell_.bias_ih), linear(tgt_emb_.weight, w_o[2], readout_.bias)}, -1)
            .value();
    w->by_context = concat({w_ih[1], w_o[1]}, 0).value();
    w->readout_state_w = pack_step_weight(w_o[0].value());
    w->out_w = pack_step_weight(out_.weight.value());
    return w;
  }

  // x: [B, S, in], or packed [Σ lengths, in] (the first layer).
  Var run_direction(const Var& x, const GruWeights& w, const std::vector<int32_t>& lengths, int S, bool reverse,
                    const PackedWeight* w_hh_packed) {
    return gru_sequence(linear(x, w.weight_ih, w.bias_ih), w.weight_hh, w.bias_hh, lengths, reverse, w_hh_packed, S);
  }

  // s_0 = tanh(W_init · mean of the real h_j + b_init): the mean as a [B,1,S]x[B,S,2H] product,
  // or, without gradients (decoding), as a loop: the product's primitive is made per (B, S), and a
  // server, meeting ever new batches, would make them without end.
  Var initial_state(const EncoderOutput& enc) {
    const int B = enc.batch, S = enc.src_len;
    if (!needs_grad({&enc.states})) {
      const int64_t D = 2 * c_.enc_hidden;
      const Tensor states = enc.states.value().contiguous();
      Tensor mean_h = Tensor::zeros({B, D});
      for (int b = 0; b < B; ++b) {
        float* m = mean_h.data() + b * D;
        for (int j = 0; j < enc.src_lengths[b]; ++j) {
          const float* h = states.data() + (static_cast<int64_t>(b) * S + j) * D;
          for (int64_t d = 0; d < D; ++d) m[d] += h[d];
        }
        const float scale = 1.f / static_cast<float>(enc.src_lengths[b]);
        for (int64_t d = 0; d < D; ++d) m[d] *= scale;
      }
      return heed::tanh(init_state_(Var(mean_h)));
    }
    Tensor weights = Tensor::zeros({B, 1, S});
    for (int b = 0; b < B; ++b)
      for (int j = 0; j < enc.src_lengths[b]; ++j) weights.data()[b * S + j] = 1.f / enc.src_lengths[b];
    Var mean_h = reshape(matmul(Var(weights), enc.states), {B, 2 * c_.enc_hidden});
    return heed::tanh(init_state_(mean_h));
  }

  // Context c_t from the query W_a·s_{t-1} + b_a: additive attention over the source positions
  // (the fused path of nn/attention: scores, softmax and context in their own kernels).
  Var attend(const Var& query, const Var& h, const Var& keys, const Tensor& pad_mask, Tensor* alpha_out) {
    attention::Options options;
    options.weights = alpha_out;
    return attention::attend(attention::AdditiveScore{query, keys, att_v_.weight}, attention::DenseKeys{pad_mask, {}},
                             h, options);
  }

  // o_t = tanh(W_o [s_t ; c_t ; e_t] + b_o), or the product alone for readout_act "linear".
  Var activate_readout(const Var& o) const { return c_.readout_act == ReadoutActivation::tanh ? heed::tanh(o) : o; }

  void keep_attention(const std::vector<Tensor>& steps, int B, int T, int S) {
    last_attention_ = Tensor::empty({B, T, S});
    for (int t = 0; t < T; ++t)
      for (int b = 0; b < B; ++b)
        std::copy(steps[t].data() + b * S, steps[t].data() + (b + 1) * S, last_attention_.data() + (b * T + t) * S);
  }

  GruConfig c_;
  float dropout_;
  int src_vocab_, tgt_vocab_;
  Embedding src_emb_, tgt_emb_;
  std::vector<GruWeights> enc_fwd_, enc_bwd_;
  Linear init_state_, att_query_, att_key_, att_v_, readout_, out_;
  GruWeights cell_;
  Tensor last_attention_;
  std::shared_ptr<const GruStepWeights> held_;   // while decoding holds them (StepWeightsHold)
  std::vector<PackedWeight> held_encoder_w_hh_;  // the same hold: per layer, forward then backward
};

}  // namespace

std::unique_ptr<Seq2Seq> make_gru_bahdanau(const ModelConfig& config, int src_vocab, int tgt_vocab, uint64_t seed) {
  return std::make_unique<GruBahdanau>(config, src_vocab, tgt_vocab, seed);
}

int64_t gru_bahdanau_parameter_count(const ModelConfig& config, int src_vocab, int tgt_vocab) {
  const int64_t E = config.gru.emb_dim, H = config.gru.enc_hidden, D = config.gru.dec_hidden, A = config.gru.attn_dim,
                L = config.gru.readout_dim;
  int64_t n = (config.share_embeddings ? src_vocab : src_vocab + tgt_vocab) * E;
  n += 2 * (3 * H * (E + H) + 6 * H);
  n += (config.gru.enc_layers - 1) * 2 * (3 * H * (2 * H + H) + 6 * H);
  n += 2 * H * D + D;
  n += 2 * H * A + D * A + A + A;
  n += 3 * D * (E + 2 * H + D) + 6 * D;
  n += (D + 2 * H + E) * L + L;
  n += (config.gru.tie_output ? 0 : L * tgt_vocab) + tgt_vocab;
  return n;
}

}  // namespace heed
