// Transformer encoder–decoder (Vaswani et al. 2017), equal to the PyTorch reference model
// (torch.nn.TransformerEncoderLayer / DecoderLayer, batch_first), parameter names included.
//
//   PE[p, 2i] = sin(p / 10000^(2i/d)),  PE[p, 2i+1] = cos(p / 10000^(2i/d)),   p = 0, 1, …
//   X⁰ = drop(√d · Esrc[x] + PE)            Y⁰ = drop(√d · Etgt[y_in] + PE)
//   MHA(Q, K, V) = Concat_k drop(softmax((Q W_qᵏ + b_qᵏ)/√d_h · (K W_kᵏ + b_kᵏ)ᵀ + mask)) (V W_vᵏ + b_vᵏ)
//                  · W_oᵀ + b_o        [W_q; W_k; W_v] = in_proj_weight [3d, d], head k = rows k·d_h…
//   FFN(X) = W_2 drop(act(W_1 X + b_1)) + b_2                       act: ReLU (or GELU, erf form)
//   post-norm layer: X = LN(X + drop(Sub(X)));  pre-norm: X = X + drop(Sub(LN(X))), and a final
//   LN after each stack (post-norm stacks have none, as in the paper)
//   encoder layer: self-attention (source pads masked as keys), FFN
//   decoder layer: causal self-attention, attention over the encoder output M (source pads
//   masked), FFN
//   p(y_t | y_<t, x) = softmax(Y_t · Etgtᵀ)                          tied output, no bias
// Masks are −∞ before the softmax (exact zeros after it). No row is fully masked: every source
// has </s>, and a pad query still attends to the real keys.
//
// Parameters (d model width, f FFN width, V vocabularies):
//   V_src·d + V_tgt·d                     embeddings (one table when shared)
//   + N_enc · (4d² + 2df + 9d + f)        attention 4d²+4d, FFN 2df+f+d, two LayerNorms 4d
//   + N_dec · (8d² + 2df + 15d + f)       two attentions, FFN, three LayerNorms
//   + 4d                                  pre-norm only: the final LayerNorms
//
// Speed: q, k and v come from one product with in_proj_weight; all heads' scores are one 3-D
// matmul over [B·h, T, d_h]; the vocabulary projection runs once over all positions. step()
// keeps every earlier step's keys and values where they were computed (cached_attention.hpp), so
// a step costs O(current length) and following a beam copies no cache.
#include "models/transformer.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <functional>
#include <numeric>

#include "models/cached_attention.hpp"
#include "nn/layers.hpp"
#include "nn/multi_head_attention.hpp"
#include "util/error.hpp"

namespace heed {
namespace {

struct EncoderLayer {
  MultiHeadAttention self_attn;
  Linear linear1, linear2;
  LayerNorm norm1, norm2;
};

struct DecoderLayer {
  MultiHeadAttention self_attn, multihead_attn;
  Linear linear1, linear2;
  LayerNorm norm1, norm2, norm3;
};

// The decoder's step weights, packed (see PackedWeight).
struct TransformerStepWeights {
  struct Layer {
    PackedWeight self_in, self_out, cross_q, cross_out, linear1, linear2;
  };
  std::vector<Layer> layers;
  PackedWeight vocab;  // the tied output projection, tgt_emb [V, d]
};

// Beam rows share their sentence's encoder rows (source_row), and a row's self-attention history
// is found through `ancestor` in the projections of earlier steps: reorder() moves row indices,
// never a key or a value.
struct TransformerState : DecoderState {
  int length = 0;                                         // decoder positions computed so far
  std::vector<int32_t> source_row;                        // [N]: the encoder row (sentence) of each row
  Tensor pad_mask;                                        // [B, S]: 1 at source pads
  std::vector<std::vector<Tensor>> self_qkv;              // [layer][position]: q | k | v of that step's rows [N_j, 3d]
  std::vector<std::vector<int32_t>> ancestor;             // [position][n]: the row of step j that row n continues
  std::vector<Tensor> cross_kv;                           // per layer [B, S, 2d]: keys | values of the encoder output
  std::shared_ptr<const TransformerStepWeights> weights;  // held by the model, or prepared by start()
};

// PE rows 0…rows−1, computed in double and rounded to float (as the reference does).
Tensor sinusoids(int64_t rows, int64_t d) {
  Tensor pe = Tensor::empty({rows, d});
  for (int64_t p = 0; p < rows; ++p)
    for (int64_t i = 0; i < d; i += 2) {
      const double angle = static_cast<double>(p) / std::pow(10000.0, static_cast<double>(i) / static_cast<double>(d));
      pe.data()[p * d + i] = static_cast<float>(std::sin(angle));
      if (i + 1 < d) pe.data()[p * d + i + 1] = static_cast<float>(std::cos(angle));
    }
  return pe;
}

// [B, h, T, S] → [B, T, S], averaged over heads.
Tensor mean_over_heads(const Tensor& probs) {
  const int64_t B = probs.dim(0), h = probs.dim(1), TS = probs.dim(2) * probs.dim(3);
  Tensor out = Tensor::zeros({B, probs.dim(2), probs.dim(3)});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t k = 0; k < h; ++k) {
      const float* p = probs.data() + (b * h + k) * TS;
      float* o = out.data() + b * TS;
      for (int64_t i = 0; i < TS; ++i) o[i] += p[i] / static_cast<float>(h);
    }
  return out;
}

class Transformer : public Seq2Seq {
 public:
  Transformer(const ModelConfig& config, int src_vocab, int tgt_vocab, uint64_t seed)
      : Seq2Seq(seed), c_(config.transformer), dropout_(config.dropout), src_vocab_(src_vocab), tgt_vocab_(tgt_vocab) {
    const int64_t d = c_.d_model, f = c_.ffn_dim;
    if (c_.heads < 1 || d % c_.heads != 0)
      throw UsageError("model.transformer.d_model (" + std::to_string(d) +
                       ") must be a multiple of model.transformer.heads (" + std::to_string(c_.heads) + ")");
    if (c_.enc_layers < 1 || c_.dec_layers < 1)
      throw UsageError("model.transformer.enc_layers and dec_layers must be at least 1");
    dh_ = d / c_.heads;
    Rng init(seed);
    std::tie(src_emb_, tgt_emb_) =
        source_target_embeddings(params_, src_vocab, tgt_vocab, d, config.share_embeddings, init);
    for (int l = 0; l < c_.enc_layers; ++l) {
      const std::string p = "encoder.layers." + std::to_string(l);
      EncoderLayer layer;
      layer.self_attn = MultiHeadAttention(params_, p + ".self_attn", d, c_.heads, init);
      layer.linear1 = xavier_linear(params_, p + ".linear1", d, f, init);
      layer.linear2 = xavier_linear(params_, p + ".linear2", f, d, init);
      layer.norm1 = LayerNorm(params_, p + ".norm1", d);
      layer.norm2 = LayerNorm(params_, p + ".norm2", d);
      encoder_.push_back(layer);
    }
    if (c_.pre_norm) enc_norm_ = LayerNorm(params_, "encoder.norm", d);
    for (int l = 0; l < c_.dec_layers; ++l) {
      const std::string p = "decoder.layers." + std::to_string(l);
      DecoderLayer layer;
      layer.self_attn = MultiHeadAttention(params_, p + ".self_attn", d, c_.heads, init);
      layer.multihead_attn = MultiHeadAttention(params_, p + ".multihead_attn", d, c_.heads, init);
      layer.linear1 = xavier_linear(params_, p + ".linear1", d, f, init);
      layer.linear2 = xavier_linear(params_, p + ".linear2", f, d, init);
      layer.norm1 = LayerNorm(params_, p + ".norm1", d);
      layer.norm2 = LayerNorm(params_, p + ".norm2", d);
      layer.norm3 = LayerNorm(params_, p + ".norm3", d);
      decoder_.push_back(layer);
    }
    if (c_.pre_norm) dec_norm_ = LayerNorm(params_, "decoder.norm", d);
    pe_ = sinusoids(c_.max_positions, d);
  }

  std::string arch() const override { return "transformer"; }
  int source_vocab() const override { return src_vocab_; }
  int target_vocab() const override { return tgt_vocab_; }
  int max_target_positions() const override { return c_.max_positions; }
  int max_source_positions() const override { return c_.max_positions; }
  Tensor last_attention() const override { return last_attention_; }

  EncoderOutput encode(const Batch& batch) override {
    const int B = batch.size, S = batch.src_len;
    EncoderOutput out;
    out.src_lengths = batch.src_lengths;
    out.batch = B;
    out.src_len = S;
    const Tensor key_pad = out.pad_mask().reshape({B, 1, 1, S});
    Var x = embed(src_emb_, batch.src, B, S, 0);
    for (const auto& layer : encoder_) {
      x = sublayer(x, layer.norm1, [&](const Var& h) {
        const MultiHeadAttention& a = layer.self_attn;
        auto qkv = a.split_heads(linear(h, a.in_proj_weight, a.in_proj_bias), 3);
        return a.attend(qkv[0], qkv[1], qkv[2], B, key_pad, coefficients(nullptr));
      });
      x = sublayer(x, layer.norm2, [&](const Var& h) { return feed_forward(layer.linear1, layer.linear2, h); });
    }
    out.states = c_.pre_norm ? enc_norm_(x) : x;
    return out;
  }

  Var forward(const Batch& batch) override {
    const int B = batch.size, T = batch.tgt_len;
    const int64_t d = c_.d_model;
    EncoderOutput enc = encode(batch);
    const Tensor key_pad = enc.pad_mask().reshape({B, 1, 1, enc.src_len});
    const Tensor causal = causal_mask(T);
    Tensor probs;
    Var y = embed(tgt_emb_, batch.tgt_in, B, T, 0);
    for (size_t l = 0; l < decoder_.size(); ++l) {
      const DecoderLayer& layer = decoder_[l];
      y = sublayer(y, layer.norm1, [&](const Var& h) {
        const MultiHeadAttention& a = layer.self_attn;
        auto qkv = a.split_heads(linear(h, a.in_proj_weight, a.in_proj_bias), 3);
        return a.attend(qkv[0], qkv[1], qkv[2], B, causal, coefficients(nullptr));
      });
      y = sublayer(y, layer.norm2, [&](const Var& h) {
        const MultiHeadAttention& a = layer.multihead_attn;
        Var q = a.split_heads(linear(h, slice_rows(a.in_proj_weight, 0, d), slice_rows(a.in_proj_bias, 0, d)), 1)[0];
        auto kv = a.split_heads(
            linear(enc.states, slice_rows(a.in_proj_weight, d, 3 * d), slice_rows(a.in_proj_bias, d, 3 * d)), 2);
        return a.attend(q, kv[0], kv[1], B, key_pad, coefficients(l + 1 == decoder_.size() ? &probs : nullptr));
      });
      y = sublayer(y, layer.norm3, [&](const Var& h) { return feed_forward(layer.linear1, layer.linear2, h); });
    }
    if (c_.pre_norm) y = dec_norm_(y);
    last_attention_ = mean_over_heads(probs);
    return linear(y, tgt_emb_.weight, Var());  // [B, T, V]
  }

  std::unique_ptr<DecoderState> start(const EncoderOutput& enc) override {
    NoGradGuard no_grad;
    const int64_t d = c_.d_model;
    auto st = std::make_unique<TransformerState>();
    st->rows = enc.batch;
    st->source_row.resize(enc.batch);
    std::iota(st->source_row.begin(), st->source_row.end(), 0);
    st->pad_mask = enc.pad_mask();
    st->self_qkv.resize(decoder_.size());
    for (const auto& layer : decoder_) {
      const MultiHeadAttention& a = layer.multihead_attn;
      st->cross_kv.push_back(
          linear(enc.states, slice_rows(a.in_proj_weight, d, 3 * d), slice_rows(a.in_proj_bias, d, 3 * d))
              .value()
              .contiguous());
    }
    st->weights = held_ ? held_ : step_weights();
    return st;
  }

  bool has_step_weights() const override { return true; }

  void hold_step_weights(bool on) override { held_ = on ? step_weights() : nullptr; }

  StepOutput step(DecoderState& state, const std::vector<int32_t>& previous) override {
    NoGradGuard no_grad;
    auto& st = static_cast<TransformerState&>(state);
    const int64_t N = st.rows, d = c_.d_model, pos = st.length, S = st.pad_mask.dim(1);
    if (static_cast<int64_t>(previous.size()) != N)
      throw Error("transformer step: " + std::to_string(previous.size()) + " tokens for " + std::to_string(N) +
                  " rows");
    StepOutput result;
    result.attention = Tensor::empty({N, S});
    Var x = reshape(embed(tgt_emb_, previous, N, 1, pos), {N, d});
    // Row n's keys and values: its ancestors' at earlier positions, its own at `pos`; its
    // sentence's encoder rows, with their pads, for cross-attention.
    std::vector<int32_t> self_rows(N * (pos + 1)), cross_rows(N * S);
    std::vector<float> cross_pad(N * S);
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t j = 0; j < pos; ++j) self_rows[n * (pos + 1) + j] = st.ancestor[j][n];
      self_rows[n * (pos + 1) + pos] = static_cast<int32_t>(n);
      std::fill_n(cross_rows.begin() + n * S, S, st.source_row[n]);
      std::copy_n(st.pad_mask.data() + st.source_row[n] * S, S, cross_pad.begin() + n * S);
    }
    std::vector<const float*> keys(std::max(pos + 1, S)), values(keys.size());
    for (size_t l = 0; l < decoder_.size(); ++l) {
      const DecoderLayer& layer = decoder_[l];
      const TransformerStepWeights::Layer& w = st.weights->layers[l];
      x = sublayer(x, layer.norm1, [&](const Var& in) {
        const MultiHeadAttention& a = layer.self_attn;
        std::vector<Tensor>& history = st.self_qkv[l];
        history.push_back(linear(in.value(), w.self_in, a.in_proj_bias.value()));  // [N, 3d]: q | k | v
        for (int64_t j = 0; j <= pos; ++j) {
          keys[j] = history[j].data() + d;
          values[j] = history[j].data() + 2 * d;
        }
        Tensor mixed = Tensor::empty({N, d});
        cached_attention(history.back().data(), 3 * d, N, c_.heads, dh_,
                         AttentionMemory{keys.data(), values.data(), self_rows.data(), 3 * d, pos + 1}, nullptr,
                         mixed.data(), nullptr);
        return Var(linear(mixed, w.self_out, a.out_proj.bias.value()));
      });
      x = sublayer(x, layer.norm2, [&](const Var& in) {
        const MultiHeadAttention& a = layer.multihead_attn;
        Tensor q = linear(in.value(), w.cross_q, a.in_proj_bias.value().slice(0, d));
        for (int64_t j = 0; j < S; ++j) {
          keys[j] = st.cross_kv[l].data() + j * 2 * d;
          values[j] = keys[j] + d;
        }
        Tensor mixed = Tensor::empty({N, d});
        const bool last = l + 1 == decoder_.size();
        cached_attention(q.data(), d, N, c_.heads, dh_,
                         AttentionMemory{keys.data(), values.data(), cross_rows.data(), S * 2 * d, S}, cross_pad.data(),
                         mixed.data(), last ? result.attention.data() : nullptr);
        return Var(linear(mixed, w.cross_out, a.out_proj.bias.value()));
      });
      x = sublayer(x, layer.norm3, [&](const Var& in) {
        Var hidden = ffn_activation(Var(linear(in.value(), w.linear1, layer.linear1.bias.value())));
        return Var(linear(hidden.value(), w.linear2, layer.linear2.bias.value()));
      });
    }
    if (c_.pre_norm) x = dec_norm_(x);
    result.logits = linear(x.value(), st.weights->vocab, Tensor());
    st.ancestor.emplace_back(N);
    std::iota(st.ancestor.back().begin(), st.ancestor.back().end(), 0);
    st.length = static_cast<int>(pos + 1);
    return result;
  }

  void reorder(DecoderState& state, const std::vector<int32_t>& rows) override {
    auto& st = static_cast<TransformerState&>(state);
    for (auto& step_rows : st.ancestor) step_rows = gather_rows(step_rows, rows);
    st.source_row = gather_rows(st.source_row, rows);
    st.rows = static_cast<int>(rows.size());
  }

 private:
  std::shared_ptr<const TransformerStepWeights> step_weights() const {
    const int64_t d = c_.d_model;
    auto w = std::make_shared<TransformerStepWeights>();
    for (const auto& layer : decoder_) {
      const MultiHeadAttention& a = layer.multihead_attn;
      w->layers.push_back({pack_step_weight(layer.self_attn.in_proj_weight.value()),
                           pack_step_weight(layer.self_attn.out_proj.weight.value()),
                           pack_step_weight(a.in_proj_weight.value().slice(0, d)),
                           pack_step_weight(a.out_proj.weight.value()), pack_step_weight(layer.linear1.weight.value()),
                           pack_step_weight(layer.linear2.weight.value())});
    }
    w->vocab = pack_step_weight(tgt_emb_.weight.value());
    return w;
  }

  Var embed(const Embedding& table, const std::vector<int32_t>& ids, int64_t rows, int64_t len, int64_t offset) {
    if (offset + len > c_.max_positions)
      throw Error("a sequence of " + std::to_string(offset + len) +
                  " positions exceeds model.transformer.max_positions (" + std::to_string(c_.max_positions) + ")");
    Var x = scale(table(ids, {rows, len}), std::sqrt(static_cast<float>(c_.d_model)));
    return drop(add(x, Var(pe_.slice(offset, offset + len))), dropout_);
  }

  // Post-norm: LN(x + drop(f(x))); pre-norm: x + drop(f(LN(x))).
  Var sublayer(const Var& x, const LayerNorm& norm, const std::function<Var(const Var&)>& f) {
    if (c_.pre_norm) return add(x, drop(f(norm(x)), dropout_));
    return norm(add(x, drop(f(x), dropout_)));
  }

  // W_2 drop(act(W_1 x + b_1)) + b_2; a ReLU and its dropout in one pass when training.
  Var feed_forward(const Linear& linear1, const Linear& linear2, const Var& x) {
    Var hidden = linear1(x);
    if (training_ && c_.activation == FeedForwardActivation::relu) return linear2(relu_dropout(hidden, dropout_, rng_));
    return linear2(drop(ffn_activation(hidden), dropout_));
  }

  Var ffn_activation(const Var& hidden) const {
    return c_.activation == FeedForwardActivation::gelu ? gelu(hidden) : relu(hidden);
  }

  // Dropout on the attention coefficients (training only); `probs` receives them as [B, h, T, S].
  attention::Options coefficients(Tensor* probs) {
    attention::Options options;
    options.dropout = training_ ? dropout_ : 0.f;
    options.rng = &rng_;
    options.weights = probs;
    return options;
  }

  static Tensor causal_mask(int64_t T) {  // [T, T]: 1 above the diagonal (future positions)
    Tensor m = Tensor::zeros({T, T});
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = i + 1; j < T; ++j) m.data()[i * T + j] = 1.f;
    return m;
  }

  TransformerConfig c_;
  float dropout_;
  int src_vocab_, tgt_vocab_;
  int64_t dh_ = 0;
  Embedding src_emb_, tgt_emb_;
  std::vector<EncoderLayer> encoder_;
  std::vector<DecoderLayer> decoder_;
  LayerNorm enc_norm_, dec_norm_;  // pre-norm only
  Tensor pe_;                      // [max_positions, d]
  Tensor last_attention_;
  std::shared_ptr<const TransformerStepWeights> held_;  // while decoding holds them (StepWeightsHold)
};

}  // namespace

std::unique_ptr<Seq2Seq> make_transformer(const ModelConfig& config, int src_vocab, int tgt_vocab, uint64_t seed) {
  return std::make_unique<Transformer>(config, src_vocab, tgt_vocab, seed);
}

int64_t transformer_parameter_count(const ModelConfig& config, int src_vocab, int tgt_vocab) {
  const int64_t d = config.transformer.d_model, f = config.transformer.ffn_dim;
  int64_t n = (config.share_embeddings ? src_vocab : int64_t{src_vocab} + tgt_vocab) * d;
  n += config.transformer.enc_layers * (4 * d * d + 2 * d * f + 9 * d + f);
  n += config.transformer.dec_layers * (8 * d * d + 2 * d * f + 15 * d + f);
  if (config.transformer.pre_norm) n += 4 * d;
  return n;
}

}  // namespace heed
