#pragma once
// `heed train`: from raw parallel text to a model directory. The loop: token-budget batches
// (data/batching) → forward → label-smoothed loss → backward (accumulating `accumulate` batches)
// → non-finite check → global-norm clipping → Adam(W) with the scheduled learning rate. Every
// validate_every steps: dev cross-entropy and BLEU, best model kept, checkpoint written. All
// state needed to continue exactly (parameters, moments, step, data position, dropout RNG,
// elapsed time, early-stopping counters) is one atomically written file.
#include <string>

#include "config/config.hpp"

namespace heed {

struct TrainOptions {
  Config config;
  std::string model_dir;
  bool resume = false;
};

struct TrainSummary {
  int64_t steps = 0;
  double final_loss = 0;  // label-smoothed loss per label of the last log window
  double best_metric = 0;
  std::string stop_reason;
};

TrainSummary train_model(const TrainOptions& options);

}  // namespace heed
