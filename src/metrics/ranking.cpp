#include "metrics/ranking.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <stdexcept>

namespace heed {
namespace {

// Indices by decreasing score; nullopt when a score is NaN. A NaN ranks nowhere, so the metric is
// NaN (it would also break the sort's ordering, and the grouping of ties below, where it equals
// not even itself, would never advance).
std::optional<std::vector<size_t>> by_score(const std::vector<float>& scores, const std::vector<bool>& positive) {
  if (scores.size() != positive.size())
    throw std::invalid_argument("ranking metric: scores and labels differ in length");
  if (std::any_of(scores.begin(), scores.end(), [](float s) { return std::isnan(s); })) return std::nullopt;
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  return order;
}

}  // namespace

double roc_auc(const std::vector<float>& scores, const std::vector<bool>& positive) {
  const auto ranked = by_score(scores, positive);
  if (!ranked) return std::nan("");
  const std::vector<size_t>& order = *ranked;
  double positives = 0, negatives = 0, area = 0;
  // Walk the thresholds from the top: each group of tied scores adds a trapezoid.
  for (size_t i = 0; i < order.size();) {
    double tp = 0, fp = 0;
    size_t j = i;
    for (; j < order.size() && scores[order[j]] == scores[order[i]]; ++j) (positive[order[j]] ? tp : fp) += 1;
    area += fp * (positives + tp / 2);
    positives += tp;
    negatives += fp;
    i = j;
  }
  if (positives == 0 || negatives == 0) return std::nan("");
  return area / (positives * negatives);
}

double average_precision(const std::vector<float>& scores, const std::vector<bool>& positive) {
  const auto ranked = by_score(scores, positive);
  if (!ranked) return std::nan("");
  const std::vector<size_t>& order = *ranked;
  const double total_positive = static_cast<double>(std::count(positive.begin(), positive.end(), true));
  if (total_positive == 0) return std::nan("");
  double tp = 0, seen = 0, ap = 0;
  for (size_t i = 0; i < order.size();) {
    double group_tp = 0;
    size_t j = i;
    for (; j < order.size() && scores[order[j]] == scores[order[i]]; ++j) group_tp += positive[order[j]] ? 1 : 0;
    tp += group_tp;
    seen += static_cast<double>(j - i);
    ap += group_tp / total_positive * (tp / seen);
    i = j;
  }
  return ap;
}

}  // namespace heed
