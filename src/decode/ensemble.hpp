#pragma once
// Several models translating as one. At each step every member scores the next token and the
// ensemble averages their logits, which up to a constant per row is mean_m log p_m(v | ·). The
// search normalises that average as it normalises any logits, so the ensemble's distribution is
// the normalised geometric mean of the members' distributions, and its scores stay
// log-probabilities, comparable with a single model's (and something sampling can draw from).
// forward() gives the same average over a whole target (heed score).
//
// Members must share the source and target vocabularies (the CLI also checks that their
// tokenizers are identical); they may differ in architecture. The ensemble owns no parameters and
// does not own its members. Attention is the members' average when all of them attend over the
// source, else absent.
#include <memory>
#include <string>
#include <vector>

#include "models/seq2seq.hpp"

namespace heed {

class Ensemble : public Seq2Seq {
 public:
  explicit Ensemble(std::vector<Seq2Seq*> members);  // heed::Error when the vocabularies differ

  // Each member encodes the batch itself: use begin().
  EncoderOutput encode(const Batch& batch) override;
  std::unique_ptr<DecoderState> start(const EncoderOutput& encoded) override;
  std::unique_ptr<DecoderState> begin(const Batch& batch) override;
  // [B, T, V]: the members' average logits (no gradients).
  Var forward(const Batch& batch) override;
  StepOutput step(DecoderState& state, const std::vector<int32_t>& previous) override;
  void reorder(DecoderState& state, const std::vector<int32_t>& rows) override;

  std::string arch() const override;
  int source_vocab() const override { return members_.front()->source_vocab(); }
  int target_vocab() const override { return members_.front()->target_vocab(); }
  int max_target_positions() const override;
  int max_source_positions() const override;
  void hold_step_weights(bool on) override;
  void set_step_precision(StepPrecision precision) override;
  bool has_step_weights() const override;  // when one of the members has

  size_t size() const { return members_.size(); }

 private:
  std::vector<Seq2Seq*> members_;
  std::vector<std::unique_ptr<StepWeightsHold>> holds_;
};

}  // namespace heed
