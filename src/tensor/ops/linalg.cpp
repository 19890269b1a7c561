// The autograd ops matmul and linear. oneDNN 2.6 has no matmul backward, so the gradients are
// matmuls too (matmul_dispatch), over transposed *views* of the same buffers (strided memory
// descriptors, no copies). Gradients accumulate with a sum post-op.
#include <optional>
#include <string>
#include <vector>

#include "tensor/ops.hpp"
#include "tensor/ops/matmul_dispatch.hpp"
#include "util/error.hpp"

namespace heed {
namespace {

Shape matmul_shape(const Tensor& a, const Tensor& b, bool ta, bool tb) {
  int64_t m = ta ? a.dim(-1) : a.dim(-2);
  int64_t n = tb ? b.dim(-2) : b.dim(-1);
  if (a.ndim() == 3) return {a.dim(0), m, n};
  if (b.ndim() == 3) return {b.dim(0), m, n};
  return {m, n};
}

// A gradient buffer to accumulate into: the existing one, or a new one (then `fresh`).
Tensor grad_target(const Var& v, bool& fresh) {
  fresh = !v.grad().defined();
  return fresh ? Tensor::empty(v.shape()) : v.grad();
}

// dst (+)= op(x)·op(y), storing a fresh result as v's gradient. x16, y16: dense x and y's bf16
// roundings, when the caller has them.
void matmul_grad(const Var& v, const Tensor& x, bool tx, const Tensor& y, bool ty, const uint16_t* x16 = nullptr,
                 const uint16_t* y16 = nullptr) {
  if (!v.requires_grad()) return;
  bool fresh;
  Tensor g = grad_target(v, fresh);
  run_matmul(g, x.contiguous(), tx, y.contiguous(), ty, nullptr, !fresh, x16, y16);
  if (fresh) v.accumulate_grad(g);
}

// C_i = A_iᵀ·op(B) with 3-D A and B shared by the batch (rare: the batch cannot be folded into
// rows because A_i is read transposed). dA_i = (dC_i·op(B)ᵀ)ᵀ, one batched matmul and a transposing
// copy; dB = Σ_i A_i·dC_i (or its transpose when B is read transposed), one matmul per batch item.
void shared_b_transposed_a_backward(const Var& a, const Var& b, const Tensor& av, const Tensor& bv, bool tb,
                                    const Tensor& g) {
  const int64_t batch = av.dim(0), k = av.dim(1), m = av.dim(2), n = g.dim(2);
  if (a.requires_grad()) {
    Tensor da_t = Tensor::empty({batch, m, k});
    matmul_into(da_t, g, bv, false, !tb);
    a.accumulate_grad(da_t.transpose(1, 2).clone());
  }
  if (!b.requires_grad()) return;
  bool fresh;
  Tensor db = grad_target(b, fresh);
  for (int64_t i = 0; i < batch; ++i) {
    Tensor ai = av.slice(i, i + 1).reshape({k, m}), gi = g.slice(i, i + 1).reshape({m, n});
    const bool acc = i > 0 || !fresh;
    if (!tb)
      matmul_into(db, ai, gi, false, false, acc);
    else
      matmul_into(db, gi, ai, true, true, acc);
  }
  if (fresh) b.accumulate_grad(db);
}

// Column sums of g[rows, cols] into bias's gradient.
void bias_grad(const Var& bias, const Tensor& g) {
  if (!bias.defined() || !bias.requires_grad()) return;
  const int64_t cols = g.dim(-1), rows = cols ? g.numel() / cols : 0;
  Tensor db = Tensor::zeros({cols});
  const float* p = g.data();
  float* d = db.data();
  // Column blocks in parallel; each column is still summed over the rows in order, so the
  // result does not depend on the thread count. Wide rows (vocabulary projections) take wider
  // blocks: a 1 KiB piece of each 32 KiB row defeated the prefetcher (2,000 x 8,000: 2.4 ms with
  // 256 columns, 1.6 with 2,048; narrower rows were fastest with 256).
  const int64_t block = cols >= kWideOutput ? 2048 : 256;
#pragma omp parallel for schedule(static) if (rows * cols >= 65536)
  for (int64_t j0 = 0; j0 < cols; j0 += block) {
    const int64_t j1 = std::min(cols, j0 + block);
    for (int64_t r = 0; r < rows; ++r)
#pragma omp simd
      for (int64_t j = j0; j < j1; ++j) d[j] += p[r * cols + j];
  }
  bias.accumulate_grad(db.reshape(bias.shape()));
}
}  // namespace

Var matmul(const Var& a, const Var& b, bool ta, bool tb) {
  // A batch of one B beside a batch of A is one B shared by the batch: multiplied, and its
  // gradient summed over the batch, as a 2-D B is (a batched gradient would not fit its matrix).
  if (a.ndim() == 3 && b.ndim() == 3 && b.dim(0) == 1 && a.dim(0) != 1)
    return matmul(a, reshape(b, {b.dim(1), b.dim(2)}), ta, tb);
  Tensor av = a.value().contiguous(), bv = b.value().contiguous();
  Tensor c = Tensor::empty(matmul_shape(av, bv, ta, tb));
  matmul_into(c, av, bv, ta, tb);
  Var out(c, needs_grad({&a, &b}));
  if (out.requires_grad()) {
    auto on = out.node_ptr();
    record_backward([a, b, av, bv, ta, tb, on] {
      const Tensor& g = on->grad;
      if (!g.defined()) return;
      // C = op(A)·op(B):  dA = dC·op(B)ᵀ (transposed back if A was read transposed), likewise dB.
      const bool shared_b = bv.ndim() == 2 && av.ndim() == 3;
      if (shared_b && ta) {
        shared_b_transposed_a_backward(a, b, av, bv, tb, g);
        return;
      }
      if (!ta)
        matmul_grad(a, g, false, bv, !tb);
      else
        matmul_grad(a, bv, tb, g, true);
      if (b.requires_grad()) {
        if (shared_b) {
          // B shared across the batch: fold the batch into rows.
          Tensor a2 = av.reshape({-1, av.dim(-1)});
          Tensor g2 = g.reshape({-1, g.dim(-1)});
          if (!tb)
            matmul_grad(b, a2, true, g2, false);
          else
            matmul_grad(b, g2, true, a2, false);
        } else if (!tb) {
          matmul_grad(b, av, !ta, g, false);
        } else {
          matmul_grad(b, g, true, av, ta);
        }
      }
    });
  }
  return out;
}

struct StepWeight::Pending {
  Var weight;
  std::vector<Var> g, x;  // per step, stacked into rows by concat at the flush
  PackedWeight forward, backward;
};

StepWeight::StepWeight(const Var& weight) : pending_(std::make_shared<Pending>()) {
  pending_->weight = weight;
  pending_->forward = pack_weight(weight.value());
  if (!needs_grad({&weight})) return;
  auto pending = pending_;
  record_backward([pending] {
    if (pending->g.empty()) return;
    matmul_grad(pending->weight, concat(pending->g, 0).value(), true, concat(pending->x, 0).value(), false);
    pending->g.clear();
    pending->x.clear();
  });
}

void StepWeight::add(const Tensor& g, const Tensor& x) const {
  if (!pending_->weight.requires_grad()) return;
  if (g.ndim() != 2 || x.ndim() != 2 || g.dim(0) != x.dim(0) || g.dim(1) != pending_->weight.dim(0) ||
      x.dim(1) != pending_->weight.dim(1))
    throw Error("step weight gradient: g " + shape_str(g.shape()) + " and x " + shape_str(x.shape()) +
                " for a weight " + shape_str(pending_->weight.shape()));
  pending_->g.emplace_back(g);
  pending_->x.emplace_back(x);
}

bool StepWeight::is_for(const Var& weight) const { return pending_->weight.node() == weight.node(); }

const PackedWeight& StepWeight::forward_packed() const { return pending_->forward; }

const PackedWeight& StepWeight::backward_packed() const {
  if (!pending_->backward.packed.defined()) pending_->backward = pack_weight(pending_->weight.value().transpose(0, 1));
  return pending_->backward;
}

namespace {
Var linear_impl(const Var& x, const Var& w, const Var& bias, const StepWeight* step) {
  if (step && !step->is_for(w)) throw Error("linear: the step weight belongs to another weight");
  Tensor xv = x.value().contiguous();
  const int64_t in = xv.dim(-1), outf = w.dim(0);
  if (w.ndim() != 2 || w.dim(1) != in)
    throw Error("linear: input " + shape_str(xv.shape()) + " with weight " + shape_str(w.shape()));
  Tensor x2 = xv.reshape({-1, in});
  Shape out_shape = xv.shape();
  out_shape.back() = outf;
  Tensor y = Tensor::empty(out_shape);
  Tensor bias_v = bias.defined() ? bias.value().reshape({outf}) : Tensor();
  // bf16: x rounded once, for this product and the weight gradient's
  const RoundedOperand x16 = step ? RoundedOperand() : RoundedOperand(x2);
  if (step)
    linear_into(y, x2, step->forward_packed(), bias_v);
  else
    run_matmul(y.reshape({x2.dim(0), outf}), x2, false, w.value(), true, bias.defined() ? &bias_v : nullptr, false,
               x16.data());
  Var out(y, needs_grad({&x, &w, &bias}));
  if (out.requires_grad()) {
    auto on = out.node_ptr();
    Tensor wv = w.value();
    std::optional<StepWeight> deferred;
    if (step) deferred = *step;
    record_backward([x, w, bias, x2, x16, wv, on, in, outf, deferred] {
      if (!on->grad.defined()) return;
      Tensor g2 = on->grad.contiguous().reshape({-1, outf});
      // bf16: the output gradient rounded once, for the input and weight gradients
      const RoundedOperand g16 = deferred ? RoundedOperand() : RoundedOperand(g2);
      if (x.requires_grad()) {
        Tensor dx = Tensor::empty(x.shape());
        if (deferred)
          linear_into(dx, g2, deferred->backward_packed(), Tensor());
        else
          run_matmul(dx.reshape({-1, in}), g2, false, wv, false, nullptr, false, g16.data());
        x.accumulate_grad(dx);
      }
      if (deferred)
        deferred->add(g2, x2);
      else
        matmul_grad(w, g2, true, x2, false, g16.data(), x16.data());
      bias_grad(bias, g2);
    });
  }
  return out;
}
}  // namespace

Var linear(const Var& x, const Var& w, const Var& bias) { return linear_impl(x, w, bias, nullptr); }

Var linear(const Var& x, const Var& w, const Var& bias, const StepWeight& step) {
  return linear_impl(x, w, bias, &step);
}

}  // namespace heed
