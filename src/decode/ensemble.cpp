#include "decode/ensemble.hpp"

#include <algorithm>

#include "decode/beam_search.hpp"
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

// rows × vocab logits turned into log-probabilities and added to `sum`.
void add_log_probs(const Tensor& logits, Tensor& sum) {
  const int64_t vocab = logits.dim(logits.ndim() - 1), rows = logits.numel() / vocab;
  const float* in = logits.data();
  float* out = sum.data();
  for (int64_t r = 0; r < rows; ++r) {
    const float normaliser = log_normaliser(in + r * vocab, static_cast<int>(vocab));
    for (int64_t v = 0; v < vocab; ++v) out[r * vocab + v] += in[r * vocab + v] - normaliser;
  }
}

void divide(Tensor& t, float n) {
  float* p = t.data();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] /= n;
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
  Tensor sum;
  for (Seq2Seq* m : members_) {
    const EvalMode eval(*m);
    const Tensor logits = m->forward(batch).value().contiguous();
    if (!sum.defined()) sum = Tensor::zeros(logits.shape());
    add_log_probs(logits, sum);
  }
  divide(sum, static_cast<float>(members_.size()));
  return Var(sum);
}

StepOutput Ensemble::step(DecoderState& state, const std::vector<int32_t>& previous) {
  auto& s = static_cast<EnsembleState&>(state);
  StepOutput out;
  bool all_attend = true;
  for (size_t i = 0; i < members_.size(); ++i) {
    StepOutput m = members_[i]->step(*s.members[i], previous);
    const Tensor logits = m.logits.contiguous();
    if (!out.logits.defined()) out.logits = Tensor::zeros(logits.shape());
    add_log_probs(logits, out.logits);
    // Source attention only: a memory-reading member's weights are over its memory rows.
    all_attend = all_attend && m.attention.defined() && members_[i]->memory_rows() == 0 &&
                 (!out.attention.defined() || out.attention.shape() == m.attention.shape());
    if (!all_attend) {
      out.attention = Tensor();
    } else if (!out.attention.defined()) {
      out.attention = m.attention.contiguous().clone();
    } else {
      const Tensor a = m.attention.contiguous();
      for (int64_t j = 0; j < a.numel(); ++j) out.attention.data()[j] += a.data()[j];
    }
  }
  divide(out.logits, static_cast<float>(members_.size()));
  if (out.attention.defined()) divide(out.attention, static_cast<float>(members_.size()));
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
