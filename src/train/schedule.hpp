#pragma once
// Learning rate of update k = 1, 2, … (the schedules of training.schedule).
//   constant:      lr · min(1, k / warmup)                      (lr when warmup = 0)
//   inverse-sqrt:  lr · min(k / warmup, √(warmup / k))          (Vaswani et al.; warmup ≥ 1)
//   linear:        warm-up, then lr → min_lr linearly until max_steps
//   cosine:        warm-up, then lr → min_lr on a half cosine until max_steps
#include <cstdint>
#include <string>

namespace heed {

struct ScheduleOptions {
  std::string kind = "constant";
  float learning_rate = 1e-3f;
  int warmup_steps = 0;
  float min_learning_rate = 0;
  int64_t total_steps = 0;  // max_steps; required by linear and cosine
};

float learning_rate_at(int64_t step, const ScheduleOptions& options);

}  // namespace heed
