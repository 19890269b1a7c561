#include "train/schedule.hpp"

#include <algorithm>
#include <cmath>

namespace heed {

float learning_rate_at(int64_t step, const TrainingConfig& t) {
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
      const double total = static_cast<double>(t.max_steps);
      const double progress = std::clamp((k - w) / std::max(1.0, total - w), 0.0, 1.0);
      const double shape =
          t.schedule == ScheduleKind::linear ? 1.0 - progress : 0.5 * (1.0 + std::cos(M_PI * progress));
      return static_cast<float>(t.min_learning_rate + (lr - t.min_learning_rate) * shape);
    }
  }
  return static_cast<float>(lr);
}

}  // namespace heed
