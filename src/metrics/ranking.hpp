#pragma once
// How well scores rank positives above negatives (link prediction): the area under the ROC
// curve and average precision, as scikit-learn's roc_auc_score and average_precision_score
// compute them (tied scores form one threshold).
#include <vector>

namespace heed {

// P(score of a random positive > score of a random negative) + ½ P(equal); NaN without both
// classes.
double roc_auc(const std::vector<float>& scores, const std::vector<bool>& positive);
// Σ_k (R_k − R_{k−1}) · P_k over the distinct thresholds, highest first; NaN without positives.
double average_precision(const std::vector<float>& scores, const std::vector<bool>& positive);

}  // namespace heed
