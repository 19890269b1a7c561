// Learning-rate schedules against values worked out by hand from the formulas in schedule.hpp.
#include <catch2/catch.hpp>

#include "train/schedule.hpp"

using namespace heed;

namespace {
TrainingConfig schedule(ScheduleKind kind, float lr, int warmup, float min_lr = 0, int total = 0) {
  TrainingConfig o;
  o.schedule = kind;
  o.learning_rate = lr;
  o.warmup_steps = warmup;
  o.min_learning_rate = min_lr;
  o.max_steps = total;
  return o;
}
}  // namespace

TEST_CASE("constant schedule: linear warm-up to lr, then flat") {
  const auto o = schedule(ScheduleKind::constant, 1e-3f, 4);
  CHECK(learning_rate_at(1, o) == Approx(2.5e-4));
  CHECK(learning_rate_at(2, o) == Approx(5e-4));
  CHECK(learning_rate_at(4, o) == Approx(1e-3));
  CHECK(learning_rate_at(5, o) == Approx(1e-3));
  CHECK(learning_rate_at(100000, o) == Approx(1e-3));
  const auto flat = schedule(ScheduleKind::constant, 3e-4f, 0);
  CHECK(learning_rate_at(1, flat) == Approx(3e-4));
  CHECK(learning_rate_at(777, flat) == Approx(3e-4));
}

TEST_CASE("inverse-sqrt schedule: k/warmup up to warmup, then sqrt(warmup/k)") {
  const auto o = schedule(ScheduleKind::inverse_sqrt, 1e-3f, 4);
  CHECK(learning_rate_at(1, o) == Approx(2.5e-4));
  CHECK(learning_rate_at(3, o) == Approx(7.5e-4));
  CHECK(learning_rate_at(4, o) == Approx(1e-3));    // the peak
  CHECK(learning_rate_at(16, o) == Approx(5e-4));   // √(4/16) = 1/2
  CHECK(learning_rate_at(100, o) == Approx(2e-4));  // √(4/100) = 1/5
  CHECK(learning_rate_at(400, o) == Approx(1e-4));  // √(4/400) = 1/10
}

TEST_CASE("linear and cosine decay: warm-up, lr after it, min_lr at and after max_steps") {
  // warm-up 10, then 100 decay steps from 1.0 to 0.1
  for (const ScheduleKind kind : {ScheduleKind::linear, ScheduleKind::cosine}) {
    INFO(name_of(kind));
    const auto o = schedule(kind, 1.0f, 10, 0.1f, 110);
    CHECK(learning_rate_at(1, o) == Approx(0.1));
    CHECK(learning_rate_at(5, o) == Approx(0.5));
    CHECK(learning_rate_at(10, o) == Approx(1.0));
    CHECK(learning_rate_at(60, o) == Approx(0.55));  // half way: both shapes at 1/2
    CHECK(learning_rate_at(110, o) == Approx(0.1));
    CHECK(learning_rate_at(500, o) == Approx(0.1));
  }
  // a quarter of the way: linear 1 − 1/4, cosine (1 + cos(π/4)) / 2
  CHECK(learning_rate_at(35, schedule(ScheduleKind::linear, 1.0f, 10, 0.1f, 110)) == Approx(0.1 + 0.9 * 0.75));
  CHECK(learning_rate_at(35, schedule(ScheduleKind::cosine, 1.0f, 10, 0.1f, 110)) == Approx(0.1 + 0.9 * 0.8535533906));
  // no warm-up: step 1 is already (almost) the full rate
  CHECK(learning_rate_at(1, schedule(ScheduleKind::linear, 1.0f, 0, 0.0f, 100)) == Approx(0.99));
}
