// Elementwise ops. Binary ops with broadcasting are bandwidth-bound loops of our own (their
// backward needs our own broadcast reductions anyway); activations run on oneDNN's eltwise
// primitives, forward and backward.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "tensor/dnnl_context.hpp"
#include "tensor/ops.hpp"
#include "tensor/ops/broadcast.hpp"

namespace heed {
namespace {

enum class BinaryKind { Add, Sub, Mul };

Var binary(const Var& a, const Var& b, BinaryKind kind) {
  Tensor av = a.value().contiguous(), bv = b.value().contiguous();
  Tensor out = Tensor::empty(av.shape());
  Broadcast bc(av.shape(), bv.shape());
  const float* pa = av.data();
  const float* pb = bv.data();
  float* po = out.data();
  if (av.shape() == bv.shape()) {
    const int64_t n = av.numel();
    switch (kind) {
      case BinaryKind::Add:
#pragma omp parallel for simd if (n > 65536)
        for (int64_t i = 0; i < n; ++i) po[i] = pa[i] + pb[i];
        break;
      case BinaryKind::Sub:
#pragma omp parallel for simd if (n > 65536)
        for (int64_t i = 0; i < n; ++i) po[i] = pa[i] - pb[i];
        break;
      case BinaryKind::Mul:
#pragma omp parallel for simd if (n > 65536)
        for (int64_t i = 0; i < n; ++i) po[i] = pa[i] * pb[i];
        break;
    }
  } else if (repeats_over_rows(av.shape(), bv.shape())) {
    const int64_t inner = bv.numel(), rows = av.numel() / inner;
#pragma omp parallel for if (av.numel() > 65536)
    for (int64_t r = 0; r < rows; ++r) {
      const float* x = pa + r * inner;
      float* o = po + r * inner;
      switch (kind) {
        case BinaryKind::Add:
#pragma omp simd
          for (int64_t j = 0; j < inner; ++j) o[j] = x[j] + pb[j];
          break;
        case BinaryKind::Sub:
#pragma omp simd
          for (int64_t j = 0; j < inner; ++j) o[j] = x[j] - pb[j];
          break;
        case BinaryKind::Mul:
#pragma omp simd
          for (int64_t j = 0; j < inner; ++j) o[j] = x[j] * pb[j];
          break;
      }
    }
  } else {
    bc.for_each_run([&](int64_t o, int64_t bo, int64_t len, int64_t step) {
      for (int64_t j = 0; j < len; ++j) {
        float y = pb[bo + j * step];
        po[o + j] = kind == BinaryKind::Add ? pa[o + j] + y : kind == BinaryKind::Sub ? pa[o + j] - y : pa[o + j] * y;
      }
    });
  }
  Var result(out, needs_grad({&a, &b}));
  if (result.requires_grad()) {
    auto on = result.node_ptr();
    record_backward([a, b, av, bv, on, kind] {
      const Tensor& g = on->grad;
      if (!g.defined()) return;
      if (kind == BinaryKind::Mul) {
        if (a.requires_grad()) {
          Tensor ga = Tensor::empty(g.shape());
          Broadcast bc(g.shape(), bv.shape());
          const float* pg = g.data();
          const float* pb = bv.data();
          float* pd = ga.data();
          bc.for_each_run([&](int64_t o, int64_t bo, int64_t len, int64_t step) {
            for (int64_t j = 0; j < len; ++j) pd[o + j] = pg[o + j] * pb[bo + j * step];
          });
          a.accumulate_grad(ga);
        }
        if (b.requires_grad()) {
          Tensor gb = Tensor::empty(g.shape());
          const float* pg = g.data();
          const float* pa = av.data();
          float* pd = gb.data();
          for (int64_t i = 0, n = g.numel(); i < n; ++i) pd[i] = pg[i] * pa[i];
          b.accumulate_grad(reduce_to_shape(gb, bv.shape()));
        }
        return;
      }
      if (a.requires_grad()) a.accumulate_grad(g);  // g is this node's and dies with it
      if (b.requires_grad()) {
        Tensor gb = reduce_to_shape(g, bv.shape());
        if (gb.data() == g.data()) gb = gb.clone();
        if (kind == BinaryKind::Sub) scale_into(gb, -1.f);
        b.accumulate_grad(gb);
      }
    });
  }
  return result;
}

struct EltwiseEntry {
  dnnl::eltwise_forward::primitive_desc fwd_pd;
  dnnl::eltwise_forward fwd;
  dnnl::eltwise_backward::primitive_desc bwd_pd;
  dnnl::eltwise_backward bwd;
};

// Without a gradient to record (decoding), out = f(in) over n elements in pieces whose sizes come
// from a bounded set: powers of two from kSmallestPiece up, and the rest (< kSmallestPiece) through
// the kSmallestPiece primitive on a padded copy. Decoding changes the element count at nearly
// every step, and with a primitive per count a server would create them without end (dropping and
// re-creating them fragments its heap). oneDNN computes each element on its own, so the values
// are those of one primitive over all n (tested).
constexpr int64_t kSmallestPiece = 1024;

void eltwise_in_pieces(const float* in, float* out, int64_t n, dnnl::algorithm alg, const std::string& name,
                       float alpha) {
  auto run = [&](const float* src, float* dst, int64_t size) {
    auto& e = dnnl_ctx::cached<dnnl::eltwise_forward>("eltwise_piece:" + name + ":" + std::to_string(size), [&] {
      dnnl::memory::desc md({size}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::a);
      return dnnl::eltwise_forward(dnnl::eltwise_forward::primitive_desc(
          dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, alg, md, alpha, 0.f), dnnl_ctx::engine()));
    });
    dnnl::memory::desc md({size}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::a);
    auto& eng = dnnl_ctx::engine();
    e.execute(dnnl_ctx::stream(), {{DNNL_ARG_SRC, dnnl::memory(md, eng, const_cast<float*>(src))},
                                   {DNNL_ARG_DST, dnnl::memory(md, eng, dst)}});
  };
  int64_t done = 0;
  for (int64_t size = int64_t{1} << 40; size >= kSmallestPiece; size >>= 1)
    if (n - done >= size) {
      run(in + done, out + done, size);
      done += size;
    }
  if (done < n) {
    thread_local std::vector<float> tail(2 * kSmallestPiece);
    std::fill(tail.begin(), tail.end(), 0.f);
    std::copy(in + done, in + n, tail.data());
    run(tail.data(), tail.data() + kSmallestPiece, kSmallestPiece);
    std::copy(tail.data() + kSmallestPiece, tail.data() + kSmallestPiece + (n - done), out + done);
  }
  dnnl_ctx::stream().wait();
}

// use_dst: the backward formula reads the output (tanh, logistic) instead of the input. alpha is
// the algorithm's parameter (the negative slope of a leaky ReLU, ELU's scale); `name` must tell
// different alphas apart, as it keys the cached primitives.
Var eltwise(const Var& a, dnnl::algorithm alg, bool use_dst, const std::string& name, float alpha = 0.f) {
  Tensor av = a.value().contiguous();
  const int64_t n = av.numel();
  Tensor out = Tensor::empty(av.shape());
  if (n > 0 && !needs_grad({&a})) {
    eltwise_in_pieces(av.data(), out.data(), n, alg, name, alpha);
    return Var(out, false);
  }
  if (n > 0) {
    std::string key = "eltwise:" + name + ":" + std::to_string(n);
    auto& e = dnnl_ctx::cached<EltwiseEntry>(key, [&] {
      dnnl::memory::desc md({n}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::a);
      dnnl::eltwise_forward::primitive_desc fpd(
          dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_training, alg, md, alpha, 0.f), dnnl_ctx::engine());
      dnnl::eltwise_backward::primitive_desc bpd(dnnl::eltwise_backward::desc(alg, md, md, alpha, 0.f),
                                                 dnnl_ctx::engine(), fpd);
      return EltwiseEntry{fpd, dnnl::eltwise_forward(fpd), bpd, dnnl::eltwise_backward(bpd)};
    });
    auto& eng = dnnl_ctx::engine();
    e.fwd.execute(dnnl_ctx::stream(), {{DNNL_ARG_SRC, dnnl::memory(e.fwd_pd.src_desc(), eng, av.data())},
                                       {DNNL_ARG_DST, dnnl::memory(e.fwd_pd.dst_desc(), eng, out.data())}});
    dnnl_ctx::stream().wait();
  }
  Var result(out, needs_grad({&a}));
  if (result.requires_grad()) {
    auto on = result.node_ptr();
    std::string key = "eltwise:" + name + ":" + std::to_string(n);
    record_backward([a, av, out, on, use_dst, key] {
      const Tensor& g = on->grad;
      if (!g.defined() || g.numel() == 0) return;
      auto& e = *static_cast<EltwiseEntry*>(dnnl_ctx::cache().entries.at(key).get());
      auto& eng = dnnl_ctx::engine();
      Tensor gs = g.contiguous();
      Tensor da = Tensor::empty(av.shape());
      e.bwd.execute(dnnl_ctx::stream(), {{use_dst ? DNNL_ARG_DST : DNNL_ARG_SRC,
                                          dnnl::memory(e.bwd_pd.src_desc(), eng, use_dst ? out.data() : av.data())},
                                         {DNNL_ARG_DIFF_DST, dnnl::memory(e.bwd_pd.diff_dst_desc(), eng, gs.data())},
                                         {DNNL_ARG_DIFF_SRC, dnnl::memory(e.bwd_pd.diff_src_desc(), eng, da.data())}});
      dnnl_ctx::stream().wait();
      a.accumulate_grad(da);
    });
  }
  return result;
}

}  // namespace

Var add(const Var& a, const Var& b) { return binary(a, b, BinaryKind::Add); }
Var sub(const Var& a, const Var& b) { return binary(a, b, BinaryKind::Sub); }
Var mul(const Var& a, const Var& b) { return binary(a, b, BinaryKind::Mul); }

namespace {
// s · t as a new dense tensor, in one pass (a clone scaled in place would take two).
Tensor scaled(const Tensor& t, float s) {
  const Tensor src = t.contiguous();
  Tensor out = Tensor::empty(src.shape());
  const float* p = src.data();
  float* d = out.data();
  const int64_t n = src.numel();
#pragma omp parallel for simd schedule(static) if (n > 65536)
  for (int64_t i = 0; i < n; ++i) d[i] = p[i] * s;
  return out;
}
}  // namespace

Var scale(const Var& a, float s) {
  Var result(scaled(a.value(), s), needs_grad({&a}));
  if (result.requires_grad()) {
    auto on = result.node_ptr();
    record_backward([a, on, s] {
      if (on->grad.defined()) a.accumulate_grad(scaled(on->grad, s));
    });
  }
  return result;
}

Var tanh(const Var& a) { return eltwise(a, dnnl::algorithm::eltwise_tanh_use_dst_for_bwd, true, "tanh"); }
Var sigmoid(const Var& a) { return eltwise(a, dnnl::algorithm::eltwise_logistic_use_dst_for_bwd, true, "sigmoid"); }
Var relu(const Var& a) { return eltwise(a, dnnl::algorithm::eltwise_relu, false, "relu"); }
Var gelu(const Var& a) { return eltwise(a, dnnl::algorithm::eltwise_gelu_erf, false, "gelu"); }
Var leaky_relu(const Var& a, float negative_slope) {
  char name[40];
  std::snprintf(name, sizeof name, "leaky_relu%a", negative_slope);  // hex: exact, one primitive per slope
  return eltwise(a, dnnl::algorithm::eltwise_relu, false, name, negative_slope);
}
Var elu(const Var& a) { return eltwise(a, dnnl::algorithm::eltwise_elu_use_dst_for_bwd, true, "elu", 1.f); }

}  // namespace heed
