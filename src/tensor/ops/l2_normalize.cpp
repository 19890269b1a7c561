// Rows scaled to unit length, for cosine similarities (content-based addressing of a memory).
// y = x / d with d = ‖x‖ + ε; backward dx = g / d − x (x·g) / (d² ‖x‖).
#include <cmath>

#include "tensor/ops.hpp"

namespace heed {
namespace {
constexpr float kEps = 1e-8f;
}

Var l2_normalize(const Var& x) {
  const Tensor xv = x.value().contiguous();
  const int64_t D = xv.dim(-1), rows = D ? xv.numel() / D : 0;
  Tensor y = Tensor::empty(xv.shape()), norms = Tensor::empty({rows});
  const float* px = xv.data();
  float* py = y.data();
  for (int64_t r = 0; r < rows; ++r) {
    double sq = 0;
    for (int64_t i = 0; i < D; ++i) sq += static_cast<double>(px[r * D + i]) * px[r * D + i];
    const float norm = static_cast<float>(std::sqrt(sq));
    norms.data()[r] = norm;
    for (int64_t i = 0; i < D; ++i) py[r * D + i] = px[r * D + i] / (norm + kEps);
  }
  Var result(y, needs_grad({&x}));
  if (result.requires_grad()) {
    auto on = result.node_ptr();
    record_backward([x, xv, norms, on, rows, D] {
      if (!on->grad.defined()) return;
      const Tensor g = on->grad.contiguous();
      Tensor dx = Tensor::empty(xv.shape());
      const float* px = xv.data();
      const float* pg = g.data();
      float* pd = dx.data();
      for (int64_t r = 0; r < rows; ++r) {
        const float norm = norms.data()[r], d = norm + kEps;
        double xg = 0;
        for (int64_t i = 0; i < D; ++i) xg += static_cast<double>(px[r * D + i]) * pg[r * D + i];
        const float c = norm > 0.f ? static_cast<float>(xg) / (d * d * norm) : 0.f;
        for (int64_t i = 0; i < D; ++i) pd[r * D + i] = pg[r * D + i] / d - px[r * D + i] * c;
      }
      x.accumulate_grad(dx);
    });
  }
  return result;
}

}  // namespace heed
