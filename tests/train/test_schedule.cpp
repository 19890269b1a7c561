// Learning-rate schedules against values worked out by hand from the formulas in schedule.hpp.
#include <catch2/catch.hpp>
#include <cmath>

#include "train/schedule.hpp"

using namespace heed;

namespace {
TrainingConfig schedule(ScheduleKind kind, float lr, int warmup, float min_lr = 0, int total = 0, double seconds = 0) {
  TrainingConfig o;
  o.schedule = kind;
  o.learning_rate = lr;
  o.warmup_steps = warmup;
  o.min_learning_rate = min_lr;
  o.max_steps = total;
  o.max_time = seconds;
  return o;
}
}  // namespace

TEST_CASE("constant schedule: linear warm-up to lr, then flat") {
  const auto o = schedule(ScheduleKind::constant, 1e-3f, 4);
  CHECK(learning_rate_at(1, 0.0, o) == Approx(2.5e-4));
  CHECK(learning_rate_at(2, 0.0, o) == Approx(5e-4));
  CHECK(learning_rate_at(4, 0.0, o) == Approx(1e-3));
  CHECK(learning_rate_at(5, 0.0, o) == Approx(1e-3));
  CHECK(learning_rate_at(100000, 0.0, o) == Approx(1e-3));
  const auto flat = schedule(ScheduleKind::constant, 3e-4f, 0);
  CHECK(learning_rate_at(1, 0.0, flat) == Approx(3e-4));
  CHECK(learning_rate_at(777, 0.0, flat) == Approx(3e-4));
}

TEST_CASE("inverse-sqrt schedule: k/warmup up to warmup, then sqrt(warmup/k)") {
  const auto o = schedule(ScheduleKind::inverse_sqrt, 1e-3f, 4);
  CHECK(learning_rate_at(1, 0.0, o) == Approx(2.5e-4));
  CHECK(learning_rate_at(3, 0.0, o) == Approx(7.5e-4));
  CHECK(learning_rate_at(4, 0.0, o) == Approx(1e-3));    // the peak
  CHECK(learning_rate_at(16, 0.0, o) == Approx(5e-4));   // √(4/16) = 1/2
  CHECK(learning_rate_at(100, 0.0, o) == Approx(2e-4));  // √(4/100) = 1/5
  CHECK(learning_rate_at(400, 0.0, o) == Approx(1e-4));  // √(4/400) = 1/10
}

TEST_CASE("linear and cosine decay: warm-up, lr after it, min_lr at and after max_steps") {
  // warm-up 10, then 100 decay steps from 1.0 to 0.1
  for (const ScheduleKind kind : {ScheduleKind::linear, ScheduleKind::cosine}) {
    INFO(name_of(kind));
    const auto o = schedule(kind, 1.0f, 10, 0.1f, 110);
    CHECK(learning_rate_at(1, 0.0, o) == Approx(0.1));
    CHECK(learning_rate_at(5, 0.0, o) == Approx(0.5));
    CHECK(learning_rate_at(10, 0.0, o) == Approx(1.0));
    CHECK(learning_rate_at(60, 0.0, o) == Approx(0.55));  // half way: both shapes at 1/2
    CHECK(learning_rate_at(110, 0.0, o) == Approx(0.1));
    CHECK(learning_rate_at(500, 0.0, o) == Approx(0.1));
  }
  // a quarter of the way: linear 1 − 1/4, cosine (1 + cos(π/4)) / 2
  CHECK(learning_rate_at(35, 0.0, schedule(ScheduleKind::linear, 1.0f, 10, 0.1f, 110)) == Approx(0.1 + 0.9 * 0.75));
  CHECK(learning_rate_at(35, 0.0, schedule(ScheduleKind::cosine, 1.0f, 10, 0.1f, 110)) == Approx(0.1 + 0.9 * 0.8535533906));
  // no warm-up: step 1 is already (almost) the full rate
  CHECK(learning_rate_at(1, 0.0, schedule(ScheduleKind::linear, 1.0f, 0, 0.0f, 100)) == Approx(0.99));
}

TEST_CASE("linear and cosine decay over a time budget: the end foreseen from the pace so far") {
  // warm-up 10, decay from 1.0 to 0.1, budget 100 s and no step limit
  const auto o = schedule(ScheduleKind::linear, 1.0f, 10, 0.1f, 0, 100);
  CHECK(learning_rate_at(5, 90.0, o) == Approx(0.5));   // warm-up follows steps, not the clock
  CHECK(learning_rate_at(10, 10.0, o) == Approx(1.0));  // the decay starts where warm-up ends
  CHECK(learning_rate_at(40, 0.0, o) == Approx(1.0));   // no time measured yet: no decay
  // 20 updates in 20 s: 100 expected, 10 of the 90 decay steps done
  CHECK(learning_rate_at(20, 20.0, o) == Approx(0.1 + 0.9 * (1 - 10.0 / 90)));
  // 55 updates in 50 s: 110 expected, 45 of 100 done
  CHECK(learning_rate_at(55, 50.0, o) == Approx(0.1 + 0.9 * 0.55));
  CHECK(learning_rate_at(70, 100.0, o) == Approx(0.1));  // the time is up
  CHECK(learning_rate_at(70, 130.0, o) == Approx(0.1));
  CHECK(learning_rate_at(55, 50.0, schedule(ScheduleKind::cosine, 1.0f, 10, 0.1f, 0, 100)) ==
        Approx(0.1 + 0.9 * 0.5 * (1 + std::cos(M_PI * 0.45))));
}

TEST_CASE("with both a step and a time budget the decay follows whichever ends first") {
  const auto o = schedule(ScheduleKind::linear, 1.0f, 10, 0.1f, 110, 100);
  // fast: 60 updates in 10 s, the step budget is nearer (50 of 100 decay steps)
  CHECK(learning_rate_at(60, 10.0, o) == Approx(0.55));
  // slow: 20 updates in 80 s, 25 expected by the clock, 10 of 15 done
  CHECK(learning_rate_at(20, 80.0, o) == Approx(0.1 + 0.9 * (1 - 10.0 / 15)));
}
