#pragma once
// The one model interface. Training calls forward(); beam search calls encode(), start(),
// step() and reorder(). Both architectures live behind it; tests check that stepping the
// decoder with teacher-forced inputs reproduces forward().
#include <memory>
#include <string>
#include <vector>

#include "nn/parameters.hpp"
#include "tensor/autograd.hpp"
#include "tensor/ops.hpp"
#include "tensor/random.hpp"
#include "tokens/batch.hpp"

namespace heed {

enum class StepPrecision { fp32, int8 };

struct EncoderOutput {
  Var states;                        // [B, S, D_enc], the annotations the decoder attends to
  std::vector<int32_t> src_lengths;  // [B] real source positions (incl. </s>)
  int batch = 0, src_len = 0;
  // A decoder that continues the encoder's recurrence (ntm) finds the state after each sentence's
  // last source token here; the attention models leave it empty.
  std::vector<Var> recurrent;
  Tensor pad_mask() const;  // [B, S]: 1 at padding, 0 at real tokens
};

// Per-architecture decoder state over N rows (sentences × beams). Rows can be gathered
// (reorder) to follow beams or to drop finished sentences.
struct DecoderState {
  virtual ~DecoderState() = default;
  int rows = 0;
};

struct StepOutput {
  Tensor logits;     // [N, V], unnormalised: the search takes the log-softmax where it needs it
  Tensor attention;  // [N, S]: weights over source positions (0 at padding); [N, memory_rows()]
};

// Rows `rows` of t along its first axis (rows may repeat): what reorder() does to every tensor of
// a decoder state. Throws heed::Error for a row out of range.
Tensor gather_rows(const Tensor& t, const std::vector<int32_t>& rows);
// The same for a per-row index (e.g. each row's encoder row).
std::vector<int32_t> gather_rows(const std::vector<int32_t>& values, const std::vector<int32_t>& rows);

class Seq2Seq {
 public:
  virtual ~Seq2Seq() = default;

  virtual EncoderOutput encode(const Batch& batch) = 0;
  // Teacher-forced logits [B, T, V] over every target position (pads included).
  virtual Var forward(const Batch& batch) = 0;
  // Attention weights of the last forward() as [B, T, S], when the model keeps them (tests,
  // alignments); undefined otherwise.
  virtual Tensor last_attention() const { return Tensor(); }

  virtual std::unique_ptr<DecoderState> start(const EncoderOutput& encoded) = 0;
  // What a search calls: encode() then start(). An ensemble overrides it (each member encodes).
  virtual std::unique_ptr<DecoderState> begin(const Batch& batch) { return start(encode(batch)); }
  // One decoder step for every row: logits of the next token, given the previous one.
  virtual StepOutput step(DecoderState& state, const std::vector<int32_t>& previous) = 0;
  // New row i is old row rows[i] (rows may repeat: expanding to beams; or shrink).
  virtual void reorder(DecoderState& state, const std::vector<int32_t>& rows) = 0;

  virtual std::string arch() const = 0;
  virtual int source_vocab() const = 0;
  virtual int target_vocab() const = 0;
  // Decoder positions step() can go through (0: no limit); beam search ends hypotheses there.
  virtual int max_target_positions() const { return 0; }
  // Encoder positions (tokens and </s>) encode() can take (0: no limit); translation cuts longer
  // inputs to fit.
  virtual int max_source_positions() const { return 0; }
  // When not 0, StepOutput::attention and last_attention() weigh this many memory rows (the
  // NTM's read weights) instead of the source positions.
  virtual int memory_rows() const { return 0; }
  // While held (StepWeightsHold), start() shares one prepared copy of the step weights (packed
  // for the per-step products) instead of preparing it for every batch. The parameters must not
  // change while it is held. Models without such weights ignore it. Holds nest: only the
  // outermost one calls this.
  virtual void hold_step_weights(bool /*on*/) {}

  // How step() multiplies by its prepared weights (attention, feed-forward and GRU projections,
  // the vocabulary projection): in fp32, or as int8 products (weights quantized by rows,
  // activations on the fly; tensor/quantize.hpp). The encoder's batched products and the weights
  // used once per batch stay fp32 (a GRU's encoder recurrence, a product per time step, is int8
  // too while a hold lasts). Takes effect when the step weights are next prepared (start() or a
  // hold).
  virtual void set_step_precision(StepPrecision precision) { step_precision_ = precision; }
  StepPrecision step_precision() const { return step_precision_; }
  // Whether step() has prepared weights that int8 applies to (the ntm's steps have none).
  virtual bool has_step_weights() const { return false; }

  ParameterSet& parameters() { return params_; }
  const ParameterSet& parameters() const { return params_; }
  void set_training(bool on) { training_ = on; }
  bool training() const { return training_; }
  Rng& rng() { return rng_; }  // dropout draws; saved with the trainer state

 protected:
  explicit Seq2Seq(uint64_t seed) : rng_(seed) {}
  Var drop(const Var& x, float p) { return training_ ? dropout(x, p, rng_) : x; }
  // A step weight prepared for the step precision.
  PackedWeight pack_step_weight(const Tensor& w) const {
    return step_precision_ == StepPrecision::int8 ? pack_weight_int8(w) : pack_weight(w);
  }

  ParameterSet params_;
  bool training_ = false;
  Rng rng_;
  StepPrecision step_precision_ = StepPrecision::fp32;

 private:
  friend class StepWeightsHold;
  int step_weight_holds_ = 0;  // open StepWeightsHold scopes
};

// Holds a model's step weights for a scope: decoding many batches with unchanging parameters.
// An inner hold (translate_lines inside a command's hold for the whole input) reuses the outer one.
class StepWeightsHold {
 public:
  explicit StepWeightsHold(Seq2Seq& model) : model_(model) {
    if (model_.step_weight_holds_++ == 0) model_.hold_step_weights(true);
  }
  ~StepWeightsHold() {
    if (--model_.step_weight_holds_ == 0) model_.hold_step_weights(false);
  }
  StepWeightsHold(const StepWeightsHold&) = delete;
  StepWeightsHold& operator=(const StepWeightsHold&) = delete;

 private:
  Seq2Seq& model_;
};

// Evaluation mode (no dropout) for a scope. The flag is written only when it changes, so
// decoders running concurrently inside an outer EvalMode only read it.
class EvalMode {
 public:
  explicit EvalMode(Seq2Seq& model) : model_(model), was_training_(model.training()) {
    if (was_training_) model_.set_training(false);
  }
  ~EvalMode() {
    if (was_training_) model_.set_training(true);
  }
  EvalMode(const EvalMode&) = delete;
  EvalMode& operator=(const EvalMode&) = delete;

 private:
  Seq2Seq& model_;
  bool was_training_;
};

}  // namespace heed
