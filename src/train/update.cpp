#include "train/update.hpp"

#include <spdlog/spdlog.h>

#include <cmath>

#include "tensor/precision.hpp"
#include "tokens/special_tokens.hpp"
#include "util/error.hpp"

namespace heed {

CrossEntropyStats accumulate_gradients(Seq2Seq& model, const std::vector<Batch>& group, float label_smoothing) {
  Shard all{group, {}, 0};
  for (const Batch& b : group) all.group_labels += b.num_labels();
  return accumulate_gradients(model, all, label_smoothing);
}

CrossEntropyStats accumulate_gradients(Seq2Seq& model, const Shard& shard, float label_smoothing,
                                       const BackwardHooks& hooks) {
  const int V = model.target_vocab();
  CrossEntropyStats stats;
  for (size_t i = 0; i < shard.batches.size(); ++i) {
    const Batch& b = shard.batches[i];
    if (!shard.streams.empty()) model.rng().set_state(model.rng().seed(), shard.streams[i]);
    Var logits = model.forward(b);
    const Var loss = cross_entropy(reshape(logits, {-1, V}), b.tgt_out, kPadId, label_smoothing,
                                   static_cast<float>(shard.group_labels), &stats);
    if (i + 1 == shard.batches.size())
      backward(loss, hooks.on_complete, hooks.between_entries);
    else
      backward(loss);
  }
  return stats;
}

UpdateOutcome apply_update(const ParameterSet& params, Adam& adam, double loss_sum, float clip_norm, float lr) {
  UpdateOutcome out;
  out.grad_norm = global_grad_norm(params);
  out.applied = std::isfinite(out.grad_norm) && std::isfinite(loss_sum);
  if (out.applied) {
    adam.step(lr, clip_norm > 0 ? clip_factor(out.grad_norm, clip_norm) : 1.f);
    refresh_bf16_weight_copies();  // bf16 training: the products' copies, once per update
  }
  params.zero_grad();
  return out;
}

void count_skipped_update(int64_t& in_a_row, int max_bad_steps, const std::string& where) {
  ++in_a_row;
  spdlog::warn("{}: non-finite loss or gradient, update skipped ({} in a row)", where, in_a_row);
  if (in_a_row >= max_bad_steps)
    throw Error("training diverged: " + std::to_string(in_a_row) +
                " consecutive updates with non-finite loss or gradients (training.max_bad_steps)");
}

}  // namespace heed
