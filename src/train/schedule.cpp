#include "train/schedule.hpp"

#include <algorithm>
#include <cmath>

#include "util/error.hpp"

namespace heed {

float learning_rate_at(int64_t step, const ScheduleOptions& o) {
  const double k = static_cast<double>(std::max<int64_t>(step, 1));
  const double lr = o.learning_rate, w = o.warmup_steps;
  if (o.kind == "constant") return static_cast<float>(w > 0 ? lr * std::min(1.0, k / w) : lr);
  if (o.kind == "inverse-sqrt") {
    const double ww = std::max(w, 1.0);
    return static_cast<float>(lr * std::min(k / ww, std::sqrt(ww / k)));
  }
  if (o.kind == "linear" || o.kind == "cosine") {
    if (o.total_steps <= 0)
      throw UsageError("training.schedule " + o.kind + " needs training.max_steps > 0");
    if (w > 0 && k <= w) return static_cast<float>(lr * k / w);
    const double progress = std::clamp((k - w) / std::max(1.0, static_cast<double>(o.total_steps) - w), 0.0, 1.0);
    const double shape = o.kind == "linear" ? 1.0 - progress : 0.5 * (1.0 + std::cos(M_PI * progress));
    return static_cast<float>(o.min_learning_rate + (lr - o.min_learning_rate) * shape);
  }
  throw UsageError("training.schedule: unknown schedule '" + o.kind + "'");
}

}  // namespace heed
