#include "train/schedule.hpp"

#include <algorithm>
#include <cmath>

namespace heed {

namespace {

// How far update k (past warm-up w) is through the decay, 0..1: the further of the step budget
// and the time budget.
double decay_progress(double k, double w, double elapsed, const TrainingConfig& t) {
  double progress = 0;
  if (t.max_steps > 0) progress = (k - w) / std::max(1.0, static_cast<double>(t.max_steps) - w);
  if (t.max_time > 0 && elapsed > 0) {
    const double expected_total = k * t.max_time / elapsed;
    progress = std::max(progress, expected_total > k ? (k - w) / (expected_total - w) : 1.0);
  }
  return std::clamp(progress, 0.0, 1.0);
}

}  // namespace

float learning_rate_at(int64_t step, double elapsed_seconds, const TrainingConfig& t) {
  const double k = static_cast<double>(std::max<int64_t>(step, 1));
  const double lr = t.learning_rate, w = t.warmup_steps;
  switch (t.schedule) {
    case ScheduleKind::constant: return static_cast<float>(w > 0 ? lr * std::min(1.0, k / w) : lr);
    case ScheduleKind::inverse_sqrt: {
      const double ww = std::max(w, 1.0);
      return static_cast<float>(lr * std::min(k / ww, std::sqrt(ww / k)));
    }
    case ScheduleKind::linear:
    case ScheduleKind::cosine: {
      if (w > 0 && k <= w) return static_cast<float>(lr * k / w);
      const double progress = decay_progress(k, w, elapsed_seconds, t);
      const double shape =
          t.schedule == ScheduleKind::linear ? 1.0 - progress : 0.5 * (1.0 + std::cos(M_PI * progress));
      return static_cast<float>(t.min_learning_rate + (lr - t.min_learning_rate) * shape);
    }
  }
  return static_cast<float>(lr);
}

}  // namespace heed
