// ROC AUC and average precision against values computed by hand (and by scikit-learn's
// roc_auc_score / average_precision_score for the same inputs), ties included.
#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>

#include "metrics/ranking.hpp"

using namespace heed;

TEST_CASE("roc_auc and average_precision: hand-computed cases") {
  // scikit-learn's documentation example: AUC 0.75, AP 0.8333…
  const std::vector<float> scores = {0.1f, 0.4f, 0.35f, 0.8f};
  const std::vector<bool> labels = {false, false, true, true};
  CHECK(roc_auc(scores, labels) == Approx(0.75));
  CHECK(average_precision(scores, labels) == Approx(5.0 / 6.0));
  // perfect and inverted rankings
  CHECK(roc_auc({3, 2, 1, 0}, {true, true, false, false}) == 1.0);
  CHECK(roc_auc({0, 1, 2, 3}, {true, true, false, false}) == 0.0);
  CHECK(average_precision({3, 2, 1, 0}, {true, true, false, false}) == 1.0);
  // ties count half: one positive tied with one negative
  CHECK(roc_auc({1, 1}, {true, false}) == 0.5);
  CHECK(average_precision({1, 1}, {true, false}) == 0.5);
  // tie group at the top: 2 of 3 positive, then a positive alone: AP = 2/3·(2/3) + 1/3·(3/4)
  CHECK(average_precision({5, 5, 5, 1}, {true, true, false, true}) == Approx(2.0 / 3 * 2.0 / 3 + 1.0 / 3 * 3.0 / 4));
  CHECK(std::isnan(roc_auc({1, 2}, {true, true})));
  CHECK(std::isnan(average_precision({1, 2}, {false, false})));
}

TEST_CASE("roc_auc and average_precision: a NaN score makes the metric NaN, at once") {
  // NaN equals not even itself: the grouping of tied scores once never advanced past it.
  CHECK(std::isnan(roc_auc({NAN, 1.f}, {true, false})));
  CHECK(std::isnan(average_precision({NAN, 1.f}, {true, false})));
  CHECK(std::isnan(roc_auc({2.f, NAN, 1.f, 0.5f}, {true, false, false, true})));
  CHECK(std::isnan(average_precision({2.f, 1.f, NAN}, {true, false, true})));
  CHECK_THROWS_AS(roc_auc({NAN}, {true, false}), std::invalid_argument);  // lengths first
}
