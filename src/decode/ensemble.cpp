#include "decode/ensemble.hpp"

#include <algorithm>

#include "util/error.hpp"

namespace heed {
namespace {

struct EnsembleState : DecoderState {
  std::vector<std::unique_ptr<DecoderState>> members;
};

// The smallest limit among those that are set (0: none).
int tightest(const std::vector<Seq2Seq*>& members, int (Seq2Seq::*limit)() const) {
  int out = 0;
  for (const Seq2Seq* m : members) {
    const int l = (m->*limit)();
    if (l > 0) out = out == 0 ? l : std::min(out, l);
  }
  return out;
}

// sum += weight · values, elementwise (an undefined sum becomes weight · values). The members'
// logits are averaged without their log-normalisers: each is a constant per row, which the
// search's own normalisation removes, so the mean of the logits gives the same distribution as
// the mean of the log-probabilities, and costs no exp pass per member.
void add_weighted(const Tensor& values, float weight, Tensor& sum) {
  const Tensor in = values.contiguous();
  const int64_t n = in.numel();
  const float* __restrict x = in.data();
  const bool first = !sum.defined();
  if (first) sum = Tensor::empty(in.shape());
  float* __restrict out = sum.data();
  if (first)
    for (int64_t i = 0; i < n; ++i) out[i] = weight * x[i];
  else
    for (int64_t i = 0; i < n; ++i) out[i] += weight * x[i];
}

}  // namespace

Ensemble::Ensemble(std::vector<Seq2Seq*> members) : Seq2Seq(1), members_(std::move(members)) {
  if (members_.empty()) throw Error("an ensemble needs at least one model");
  const Seq2Seq& first = *members_.front();
  for (size_t i = 1; i < members_.size(); ++i) {
    const Seq2Seq& m = *members_[i];
    if (m.target_vocab() != first.target_vocab() || m.source_vocab() != first.source_vocab())
      throw Error("ensemble: model " + std::to_string(i + 1) + " has vocabularies of " +
                  std::to_string(m.source_vocab()) + " source and " + std::to_string(m.target_vocab()) +
                  " target tokens, model 1 has " + std::to_string(first.source_vocab()) + " and " +
                  std::to_string(first.target_vocab()) + ": ensembles need the same vocabularies");
  }
}

EncoderOutput Ensemble::encode(const Batch&) { throw Error("internal error: an ensemble's members encode (begin)"); }

std::unique_ptr<DecoderState> Ensemble::start(const EncoderOutput&) {
  throw Error("internal error: an ensemble's members encode (begin)");
}

std::unique_ptr<DecoderState> Ensemble::begin(const Batch& batch) {
  auto state = std::make_unique<EnsembleState>();
  for (Seq2Seq* m : members_) state->members.push_back(m->begin(batch));
  state->rows = batch.size;
  return state;
}

Var Ensemble::forward(const Batch& batch) {
  NoGradGuard no_grad;
  const float weight = 1.0f / static_cast<float>(members_.size());
  Tensor sum;
  for (Seq2Seq* m : members_) {
    const EvalMode eval(*m);
    add_weighted(m->forward(batch).value(), weight, sum);
  }
  return Var(sum);
}

StepOutput Ensemble::step(DecoderState& state, const std::vector<int32_t>& previous) {
  auto& s = static_cast<EnsembleState&>(state);
  const float weight = 1.0f / static_cast<float>(members_.size());
  StepOutput out;
  bool all_attend = true;
  for (size_t i = 0; i < members_.size(); ++i) {
    StepOutput m = members_[i]->step(*s.members[i], previous);
    add_weighted(m.logits, weight, out.logits);
    // Source attention only: a memory-reading member's weights are over its memory rows.
    all_attend = all_attend && m.attention.defined() && members_[i]->memory_rows() == 0 &&
                 (!out.attention.defined() || out.attention.shape() == m.attention.shape());
    if (all_attend)
      add_weighted(m.attention, weight, out.attention);
    else
      out.attention = Tensor();
  }
  s.rows = static_cast<int>(previous.size());
  return out;
}

void Ensemble::reorder(DecoderState& state, const std::vector<int32_t>& rows) {
  auto& s = static_cast<EnsembleState&>(state);
  for (size_t i = 0; i < members_.size(); ++i) members_[i]->reorder(*s.members[i], rows);
  s.rows = static_cast<int>(rows.size());
}

std::string Ensemble::arch() const {
  std::string names;
  for (const Seq2Seq* m : members_) names += (names.empty() ? "" : " + ") + m->arch();
  return "ensemble of " + names;
}

int Ensemble::max_target_positions() const { return tightest(members_, &Seq2Seq::max_target_positions); }
int Ensemble::max_source_positions() const { return tightest(members_, &Seq2Seq::max_source_positions); }

void Ensemble::set_step_precision(StepPrecision precision) {
  Seq2Seq::set_step_precision(precision);
  for (Seq2Seq* m : members_) m->set_step_precision(precision);
}

bool Ensemble::has_step_weights() const {
  return std::any_of(members_.begin(), members_.end(), [](const Seq2Seq* m) { return m->has_step_weights(); });
}

void Ensemble::hold_step_weights(bool on) {
  if (!on) {
    holds_.clear();
    return;
  }
  for (Seq2Seq* m : members_) holds_.push_back(std::make_unique<StepWeightsHold>(*m));
}

}  // namespace heed
