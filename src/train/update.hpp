#pragma once
// One optimizer update of the training loop, split out so it can be tested on its own:
// gradients accumulated over a group of batches, then (if finite) clipped and applied.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/seq2seq.hpp"
#include "tensor/ops.hpp"
#include "tokens/batch.hpp"
#include "train/optimizer.hpp"

namespace heed {

// Forward and backward of every batch of `group` (gradient accumulation). Each batch's loss is
// divided by the label count of the whole group, so the accumulated gradient is that of the mean
// loss per label over all of them, as if they were one batch.
CrossEntropyStats accumulate_gradients(Seq2Seq& model, const std::vector<Batch>& group, float label_smoothing);

// One process's share of a step's group (data-parallel training). `group_labels` is the label
// count of the whole group, over all processes, so that the gradients summed over them are those
// of accumulate_gradients on the whole group. Before each batch's forward the dropout stream is
// set to the batch's `streams` entry, when given (a function of its place in the data, so a
// batch draws the same masks whichever process takes it). `on_complete` goes to the last backward.
struct Shard {
  std::vector<Batch> batches;
  std::vector<uint64_t> streams;
  int64_t group_labels = 0;
};
struct BackwardHooks {
  std::function<void(VarNode*)> on_complete;
  std::function<void()> between_entries;
};
CrossEntropyStats accumulate_gradients(Seq2Seq& model, const Shard& shard, float label_smoothing,
                                       const BackwardHooks& hooks = {});

struct UpdateOutcome {
  bool applied = false;  // false: loss or gradient was NaN/Inf, nothing changed but the gradients
  double grad_norm = 0;  // before clipping
};

// When the loss sum and the global gradient norm are finite: clips to clip_norm (0 = off) and
// takes an Adam step with lr. Either way the gradients are zeroed afterwards.
UpdateOutcome apply_update(const ParameterSet& params, Adam& adam, double loss_sum, float clip_norm, float lr);

// After apply_update skipped an update: counts it in `in_a_row` (updates skipped since the last
// applied one; the caller zeroes it when one is applied), warns naming the update (`where`:
// "step 12", "epoch 3"), and throws heed::Error once max_bad_steps have been skipped in a row
// (training.max_bad_steps).
void count_skipped_update(int64_t& in_a_row, int max_bad_steps, const std::string& where);

}  // namespace heed
