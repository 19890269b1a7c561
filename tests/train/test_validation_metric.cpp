// Which validation replaces the best model: higher BLEU, lower cross-entropy, the first one when
// there is none yet, and never a non-finite metric (a NaN kept as the best would never be beaten,
// so no later checkpoint or average could become the model).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "train/validation.hpp"

using heed::improves_on;
using heed::ValidationMetric;

TEST_CASE("improves_on: the direction of each metric, the first validation, and non-finite metrics") {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  constexpr double inf = std::numeric_limits<double>::infinity();
  CHECK(improves_on(20.5, 20.0, ValidationMetric::bleu));
  CHECK_FALSE(improves_on(20.0, 20.0, ValidationMetric::bleu));  // a tie keeps the earlier model
  CHECK_FALSE(improves_on(19.0, 20.0, ValidationMetric::bleu));
  CHECK(improves_on(2.5, 3.0, ValidationMetric::cross_entropy));
  CHECK_FALSE(improves_on(3.0, 3.0, ValidationMetric::cross_entropy));
  CHECK_FALSE(improves_on(3.5, 3.0, ValidationMetric::cross_entropy));
  CHECK(improves_on(0.0, std::nullopt, ValidationMetric::bleu));
  CHECK(improves_on(9.0, std::nullopt, ValidationMetric::cross_entropy));
  for (double bad : {nan, inf, -inf}) {
    CHECK_FALSE(improves_on(bad, std::nullopt, ValidationMetric::cross_entropy));
    CHECK_FALSE(improves_on(bad, 3.0, ValidationMetric::cross_entropy));
    CHECK_FALSE(improves_on(bad, 20.0, ValidationMetric::bleu));
  }
}
