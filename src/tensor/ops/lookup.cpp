// Ops oneDNN 2.6 has no primitive for: embedding gather / scatter-add, masking, dropout and
// full reductions (its reduction primitive is a slow reference kernel here).
#include <algorithm>
#include <cstring>

#include "tensor/ops.hpp"
#include "tensor/ops/broadcast.hpp"
#include "tensor/ops/dropout_mask.hpp"
#include "util/error.hpp"

namespace heed {

Var embedding(const Var& table, const std::vector<int32_t>& ids, const Shape& ids_shape) {
  const int64_t vocab = table.dim(0), dim = table.dim(1);
  if (static_cast<int64_t>(ids.size()) != shape_numel(ids_shape))
    throw Error("embedding: " + std::to_string(ids.size()) + " ids for shape " + shape_str(ids_shape));
  Shape shape = ids_shape;
  shape.push_back(dim);
  Tensor out = Tensor::empty(shape);
  const float* t = table.value().data();
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= vocab)
      throw Error("embedding: id " + std::to_string(ids[i]) + " outside a vocabulary of " + std::to_string(vocab));
    std::memcpy(out.data() + i * dim, t + static_cast<int64_t>(ids[i]) * dim, dim * sizeof(float));
  }
  Var result(out, needs_grad({&table}));
  if (result.requires_grad()) {
    auto on = result.node_ptr();
    record_backward([table, ids, on, dim] {
      if (!on->grad.defined()) return;
      Tensor g = on->grad.contiguous();
      bool fresh = !table.grad().defined();
      Tensor d = fresh ? Tensor::zeros(table.shape()) : table.grad();
      float* pd = d.data();
      const float* pg = g.data();
      for (size_t i = 0; i < ids.size(); ++i) {
        float* row = pd + static_cast<int64_t>(ids[i]) * dim;
        const float* gr = pg + i * dim;
#pragma omp simd
        for (int64_t j = 0; j < dim; ++j) row[j] += gr[j];
      }
      if (fresh) table.accumulate_grad(d);
    });
  }
  return result;
}

Var masked_fill(const Var& x, const Tensor& mask, float value) {
  Tensor xv = x.value().contiguous(), mv = mask.contiguous();
  Tensor out = Tensor::empty(xv.shape());
  Broadcast bc(xv.shape(), mv.shape());
  const float* px = xv.data();
  const float* pm = mv.data();
  float* po = out.data();
  bc.for_each_run([&](int64_t o, int64_t mo, int64_t len, int64_t step) {
    for (int64_t j = 0; j < len; ++j) po[o + j] = pm[mo + j * step] != 0.f ? value : px[o + j];
  });
  Var result(out, needs_grad({&x}));
  if (result.requires_grad()) {
    auto on = result.node_ptr();
    record_backward([x, mv, on] {
      if (!on->grad.defined()) return;
      const Tensor g = on->grad.contiguous();
      Tensor d = Tensor::empty(g.shape());
      Broadcast bc(g.shape(), mv.shape());
      const float* pm = mv.data();
      const float* pg = g.data();
      float* pd = d.data();
      bc.for_each_run([&](int64_t o, int64_t mo, int64_t len, int64_t step) {
        for (int64_t j = 0; j < len; ++j) pd[o + j] = pm[mo + j * step] != 0.f ? 0.f : pg[o + j];
      });
      x.accumulate_grad(d);
    });
  }
  return result;
}

namespace {
// Masks are drawn in blocks of this many elements into a buffer on the stack (DropoutMask::fill).
constexpr int64_t kMaskBlock = 1024;

// y = mask ⊙ f(x) with f = identity or ReLU, one pass each way.
template <bool kRelu>
Var masked_dropout(const Var& x, const DropoutMask& mask) {
  Tensor xv = x.value().contiguous();
  const int64_t n = xv.numel();
  Tensor out = Tensor::empty(xv.shape());
  float* po = out.data();
  const float* px = xv.data();
  const int64_t blocks = (n + kMaskBlock - 1) / kMaskBlock;
#pragma omp parallel for schedule(static) if (n > 65536)
  for (int64_t b = 0; b < blocks; ++b) {
    float m[kMaskBlock];
    const int64_t first = b * kMaskBlock, count = std::min(kMaskBlock, n - first);
    mask.fill(m, first, count);
#pragma omp simd
    for (int64_t j = 0; j < count; ++j) po[first + j] = (kRelu ? std::max(px[first + j], 0.f) : px[first + j]) * m[j];
  }
  Var result(out, needs_grad({&x}));
  if (result.requires_grad()) {
    auto on = result.node_ptr();
    const Tensor relu_input = kRelu ? xv : Tensor();  // ReLU's backward needs the sign of x
    record_backward([x, relu_input, on, n, mask] {
      if (!on->grad.defined()) return;
      const Tensor g = on->grad.contiguous();
      Tensor d = Tensor::empty(g.shape());
      const float* pg = g.data();
      const float* px = kRelu ? relu_input.data() : nullptr;
      float* pd = d.data();
      const int64_t blocks = (n + kMaskBlock - 1) / kMaskBlock;
#pragma omp parallel for schedule(static) if (n > 65536)
      for (int64_t b = 0; b < blocks; ++b) {
        float m[kMaskBlock];
        const int64_t first = b * kMaskBlock, count = std::min(kMaskBlock, n - first);
        mask.fill(m, first, count);
#pragma omp simd
        for (int64_t j = 0; j < count; ++j)
          pd[first + j] = kRelu && !(px[first + j] > 0.f) ? 0.f : pg[first + j] * m[j];
      }
      x.accumulate_grad(d);
    });
  }
  return result;
}
}  // namespace

Var dropout(const Var& x, float p, Rng& rng) {
  if (p <= 0.f) return x;
  return masked_dropout<false>(x, DropoutMask(p, rng));
}

Var relu_dropout(const Var& x, float p, Rng& rng) {
  if (p <= 0.f) return relu(x);
  return masked_dropout<true>(x, DropoutMask(p, rng));
}

namespace {
Var reduce_all(const Var& a, float factor) {
  Tensor av = a.value().contiguous();
  double acc = 0;
  const float* p = av.data();
  for (int64_t i = 0, n = av.numel(); i < n; ++i) acc += p[i];
  Var out(Tensor::full({1}, static_cast<float>(acc * factor)), needs_grad({&a}));
  if (out.requires_grad()) {
    auto on = out.node_ptr();
    record_backward([a, on, factor] {
      if (on->grad.defined()) a.accumulate_grad(Tensor::full(a.shape(), on->grad.item() * factor));
    });
  }
  return out;
}
}  // namespace

Var sum(const Var& a) { return reduce_all(a, 1.f); }
Var mean(const Var& a) { return reduce_all(a, a.value().numel() ? 1.f / a.value().numel() : 0.f); }

}  // namespace heed
