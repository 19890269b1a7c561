// Label-smoothed cross-entropy from logits in one numerically stable pass per row (oneDNN has
// no loss primitive). Backward: (softmax − ((1−ε)·onehot + ε/V)) · g / normalizer.
#include <cmath>

#include "tensor/ops.hpp"
#include "tensor/ops/fast_math.hpp"
#include "util/error.hpp"

namespace heed {

Var cross_entropy(const Var& logits, const std::vector<int32_t>& targets, int ignore_index, float eps,
                  float normalizer, CrossEntropyStats* stats) {
  Tensor lv = logits.value().contiguous();
  const int64_t vocab = lv.dim(-1), rows = lv.numel() / vocab;
  if (static_cast<int64_t>(targets.size()) != rows)
    throw Error("cross_entropy: " + std::to_string(targets.size()) + " targets for " + std::to_string(rows) + " rows");
  for (int32_t y : targets)
    if (y != ignore_index && (y < 0 || y >= vocab))
      throw Error("cross_entropy: target id " + std::to_string(y) + " outside a vocabulary of " + std::to_string(vocab));
  // Per-row results summed afterwards in row order: an OpenMP reduction would add the threads'
  // partial sums in arrival order, so the loss would not be bitwise reproducible.
  std::vector<float> lse(rows);
  std::vector<double> row_loss(rows, 0.0), row_nll(rows, 0.0);
  const float* pl = lv.data();
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t y = targets[r];
    if (y == ignore_index) continue;
    const float* x = pl + r * vocab;
    float mx = x[0];
#pragma omp simd reduction(max : mx)
    for (int64_t k = 1; k < vocab; ++k) mx = std::max(mx, x[k]);
    float se = 0, sx = 0;
#pragma omp simd reduction(+ : se, sx)
    for (int64_t k = 0; k < vocab; ++k) {
      se += fast_exp(x[k] - mx);
      sx += x[k];
    }
    const double l = mx + std::log(static_cast<double>(se));
    lse[r] = static_cast<float>(l);
    const double nll = l - x[y];
    row_nll[r] = nll;
    row_loss[r] = (1.0 - eps) * nll + eps * (l - static_cast<double>(sx) / vocab);
  }
  double loss_sum = 0, nll_sum = 0;
  int64_t labels = 0;
  for (int64_t r = 0; r < rows; ++r) {
    if (targets[r] == ignore_index) continue;
    loss_sum += row_loss[r];
    nll_sum += row_nll[r];
    ++labels;
  }
  if (stats) {
    stats->nll_sum += nll_sum;
    stats->loss_sum += loss_sum;
    stats->labels += labels;
  }
  Var out(Tensor::full({1}, static_cast<float>(loss_sum / normalizer)), needs_grad({&logits}));
  if (out.requires_grad()) {
    auto on = out.node_ptr();
    record_backward([logits, lv, targets, lse, on, ignore_index, eps, normalizer, vocab, rows] {
      if (!on->grad.defined()) return;
      const float g = on->grad.item() / normalizer;
      Tensor d = Tensor::empty(lv.shape());
      const float* pl = lv.data();
      float* pd = d.data();
      const float smooth = eps / vocab;
#pragma omp parallel for schedule(static)
      for (int64_t r = 0; r < rows; ++r) {
        float* dr = pd + r * vocab;
        const int32_t y = targets[r];
        if (y == ignore_index) {
          for (int64_t k = 0; k < vocab; ++k) dr[k] = 0.f;
          continue;
        }
        const float* x = pl + r * vocab;
        const float l = lse[r];
#pragma omp simd
        for (int64_t k = 0; k < vocab; ++k) dr[k] = g * (fast_exp(x[k] - l) - smooth);
        dr[y] -= g * (1.f - eps);
      }
      logits.accumulate_grad(d);
    });
  }
  return out;
}

}  // namespace heed
