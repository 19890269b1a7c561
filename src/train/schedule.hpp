#pragma once
// Learning rate of update k = 1, 2, … (the schedules of training.schedule).
//   constant:      lr · min(1, k / warmup)                      (lr when warmup = 0)
//   inverse-sqrt:  lr · min(k / warmup, √(warmup / k))          (Vaswani et al.; warmup ≥ 1)
//   linear:        warm-up, then lr → min_lr linearly until the end of the budget
//   cosine:        warm-up, then lr → min_lr on a half cosine until the end of the budget
// The budget is max_steps, max_time or both (whichever ends first). A time budget's end is
// foreseen from the pace so far: at elapsed time t of max_time T, update k expects k·T/t updates
// in all, so the decay follows the clock and reaches min_lr as time runs out. That pace is
// measured, so a run with a time budget is not bit-reproducible; give max_steps for that.
// The config check guarantees what each needs (warmup ≥ 1, max_steps or max_time > 0).
#include <cstdint>

#include "config/config.hpp"

namespace heed {

// elapsed_seconds: training time so far (across resumes), read only by a time budget's decay.
float learning_rate_at(int64_t step, double elapsed_seconds, const TrainingConfig& training);

}  // namespace heed
