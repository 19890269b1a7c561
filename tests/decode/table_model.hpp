#pragma once
// A hand-made Seq2Seq for search tests: the next-token distribution is a fixed pseudo-random
// table indexed by (the sentence's first source token, the whole prefix generated so far), plus
// per-token biases, so every hypothesis has its own distribution and an exhaustive search can
// enumerate the same numbers. The decoder state is the prefix itself, so reorder() mistakes show
// up as wrong distributions. Attention at step t is one-hot on source position t mod length.
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "decode/beam_search.hpp"
#include "models/seq2seq.hpp"
#include "util/error.hpp"

namespace heed::test {

class TableModel : public Seq2Seq {
 public:
  TableModel(int vocab, uint64_t table_seed)
      : Seq2Seq(1), vocab_(vocab), table_seed_(table_seed), bias_(vocab, 0.f), first_bias_(vocab, 0.f) {}

  void set_bias(int32_t token, float value) { bias_[token] = value; }
  void set_first_step_bias(int32_t token, float value) { first_bias_[token] = value; }  // empty prefix only
  void set_max_positions(int positions) { max_positions_ = positions; }
  int max_target_positions() const override { return max_positions_; }

  // Logits of the next token given (sentence key, prefix): hashed values in [-3, 3) plus the bias.
  std::vector<float> logits(int32_t key, const std::vector<int32_t>& prefix) const {
    uint64_t h = mix(table_seed_ ^ (uint64_t(key) << 32));
    for (int32_t t : prefix) h = mix(h ^ uint64_t(t + 1));
    std::vector<float> out(vocab_);
    for (int v = 0; v < vocab_; ++v)
      out[v] = float(mix(h + uint64_t(v) * 0x9E3779B97F4A7C15ull) >> 40) / float(1 << 24) * 6.f - 3.f + bias_[v] +
               (prefix.empty() ? first_bias_[v] : 0.f);
    return out;
  }

  // log p(· | key, prefix), normalised as the search does it, so that sums over a path agree
  // bit for bit with the search's scores.
  std::vector<float> log_probs(int32_t key, const std::vector<int32_t>& prefix) const {
    std::vector<float> lp = logits(key, prefix);
    const float normaliser = log_normaliser(lp.data(), vocab_);
    for (float& l : lp) l -= normaliser;
    return lp;
  }

  EncoderOutput encode(const Batch& batch) override {
    keys_.clear();
    for (int b = 0; b < batch.size; ++b) keys_.push_back(batch.src[size_t(b) * batch.src_len]);
    EncoderOutput e;
    e.batch = batch.size;
    e.src_len = batch.src_len;
    e.src_lengths = batch.src_lengths;
    return e;
  }
  Var forward(const Batch&) override { throw Error("TableModel: forward is not used by search"); }

  std::unique_ptr<DecoderState> start(const EncoderOutput& enc) override {
    auto st = std::make_unique<State>();
    st->rows = enc.batch;
    st->src_len = enc.src_len;
    st->keys = keys_;
    st->src_lengths = enc.src_lengths;
    st->prefixes.assign(enc.batch, {});
    st->started.assign(enc.batch, false);
    return st;
  }

  StepOutput step(DecoderState& state, const std::vector<int32_t>& previous) override {
    auto& st = static_cast<State&>(state);
    if (int(previous.size()) != st.rows) throw Error("TableModel: previous has the wrong size");
    step_rows.push_back(st.rows);
    training_in_step = training_in_step || training();
    Tensor out = Tensor::empty({st.rows, vocab_});
    Tensor att = Tensor::zeros({st.rows, st.src_len});
    for (int r = 0; r < st.rows; ++r) {
      if (!st.started[r]) {
        if (previous[r] != 2) throw Error("TableModel: the first input is not <s>");
        st.started[r] = true;
      } else {
        st.prefixes[r].push_back(previous[r]);
      }
      const auto row = logits(st.keys[r], st.prefixes[r]);
      std::copy(row.begin(), row.end(), out.data() + int64_t(r) * vocab_);
      att.data()[int64_t(r) * st.src_len + st.prefixes[r].size() % st.src_lengths[r]] = 1.f;
    }
    return {out, att};
  }

  void reorder(DecoderState& state, const std::vector<int32_t>& rows) override {
    auto& st = static_cast<State&>(state);
    State next;
    for (int32_t r : rows) {
      next.keys.push_back(st.keys[r]);
      next.src_lengths.push_back(st.src_lengths[r]);
      next.prefixes.push_back(st.prefixes[r]);
      next.started.push_back(st.started[r]);
    }
    st.keys = std::move(next.keys);
    st.src_lengths = std::move(next.src_lengths);
    st.prefixes = std::move(next.prefixes);
    st.started = std::move(next.started);
    st.rows = int(rows.size());
  }

  std::string arch() const override { return "table"; }
  int source_vocab() const override { return vocab_; }
  int target_vocab() const override { return vocab_; }

  void hold_step_weights(bool on) override { hold_calls.push_back(on); }

  std::vector<int> step_rows;    // rows of each step() call
  std::vector<bool> hold_calls;  // each hold_step_weights() call
  bool training_in_step = false;

 private:
  struct State : DecoderState {
    int src_len = 0;
    std::vector<int32_t> keys, src_lengths;
    std::vector<std::vector<int32_t>> prefixes;
    std::vector<bool> started;
  };

  static uint64_t mix(uint64_t x) {  // splitmix64's finaliser
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
  }

  int vocab_;
  uint64_t table_seed_;
  std::vector<float> bias_, first_bias_;
  std::vector<int32_t> keys_;
  int max_positions_ = 0;
};

}  // namespace heed::test
