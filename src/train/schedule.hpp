#pragma once
// Learning rate of update k = 1, 2, … (the schedules of training.schedule).
//   constant:      lr · min(1, k / warmup)                      (lr when warmup = 0)
//   inverse-sqrt:  lr · min(k / warmup, √(warmup / k))          (Vaswani et al.; warmup ≥ 1)
//   linear:        warm-up, then lr → min_lr linearly until max_steps
//   cosine:        warm-up, then lr → min_lr on a half cosine until max_steps
// The config check guarantees what each needs (warmup ≥ 1, max_steps > 0).
#include <cstdint>

#include "config/config.hpp"

namespace heed {

float learning_rate_at(int64_t step, const TrainingConfig& training);

}  // namespace heed
