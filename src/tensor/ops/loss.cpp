// Label-smoothed cross-entropy from logits (oneDNN has no loss primitive). The gradient
// (softmax − ((1−ε)·onehot + ε/V)) / normalizer is written in the same pass as the loss when the
// logits need one: each row is then read from memory once and its exponentials taken once, where
// a separate backward would read [rows, V] again and recompute them. Backward only scales it by
// the upstream gradient (1 for a loss passed to backward()).
#include <cmath>

#include "tensor/fast_math.hpp"
#include "tensor/ops.hpp"
#include "util/error.hpp"

namespace heed {

Var cross_entropy(const Var& logits, const std::vector<int32_t>& targets, int ignore_index, float eps, float normalizer,
                  CrossEntropyStats* stats) {
  Tensor lv = logits.value().contiguous();
  const int64_t vocab = lv.dim(-1);
  if (vocab == 0) throw Error("cross_entropy over an empty vocabulary " + shape_str(lv.shape()));
  const int64_t rows = lv.numel() / vocab;
  if (static_cast<int64_t>(targets.size()) != rows)
    throw Error("cross_entropy: " + std::to_string(targets.size()) + " targets for " + std::to_string(rows) + " rows");
  for (int32_t y : targets)
    if (y != ignore_index && (y < 0 || y >= vocab))
      throw Error("cross_entropy: target id " + std::to_string(y) + " outside a vocabulary of " +
                  std::to_string(vocab));
  const bool with_grad = needs_grad({&logits});
  Tensor d = with_grad ? Tensor::empty(lv.shape()) : Tensor();
  // Per-row results summed afterwards in row order: an OpenMP reduction would add the threads'
  // partial sums in arrival order, so the loss would not be bitwise reproducible.
  std::vector<double> row_loss(rows, 0.0), row_nll(rows, 0.0);
  const float* pl = lv.data();
  const float smooth = eps / vocab, inv_norm = 1.f / normalizer;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t y = targets[r];
    float* dr = with_grad ? d.data() + r * vocab : nullptr;
    if (y == ignore_index) {
      if (dr)
        for (int64_t k = 0; k < vocab; ++k) dr[k] = 0.f;
      continue;
    }
    const float* x = pl + r * vocab;
    const float mx = max_of(x, vocab);
    float se = 0, sx = 0;
    if (dr) {
#pragma omp simd reduction(+ : se, sx)
      for (int64_t k = 0; k < vocab; ++k) {
        const float e = fast_exp(x[k] - mx);
        dr[k] = e;
        se += e;
        sx += x[k];
      }
    } else {
#pragma omp simd reduction(+ : se, sx)
      for (int64_t k = 0; k < vocab; ++k) {
        se += fast_exp(x[k] - mx);
        sx += x[k];
      }
    }
    const double l = mx + std::log(static_cast<double>(se));
    const double nll = l - x[y];
    row_nll[r] = nll;
    row_loss[r] = (1.0 - eps) * nll + eps * (l - static_cast<double>(sx) / vocab);
    if (dr) {
      const float scale = inv_norm / se, shift = smooth * inv_norm;
#pragma omp simd
      for (int64_t k = 0; k < vocab; ++k) dr[k] = dr[k] * scale - shift;
      dr[y] -= (1.f - eps) * inv_norm;
    }
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
  Var out(Tensor::full({1}, static_cast<float>(loss_sum / normalizer)), with_grad);
  if (with_grad) {
    auto on = out.node_ptr();
    record_backward([logits, d, on] {
      if (!on->grad.defined()) return;
      const float g = on->grad.item();
      if (g != 1.f) scale_into(d, g);  // d is this op's own buffer: scaled in place
      logits.accumulate_grad(d);
    });
  }
  return out;
}

}  // namespace heed
