// softmax / log-softmax along the last axis and layer normalisation, on oneDNN primitives
// (forward and backward). Inputs are made dense: strided views would fall back to ref kernels.
// Without a gradient to record (decoding) the rows go in row pieces (row_pieces.hpp): the same
// values, from a bounded set of primitives.
#include <cstdio>
#include <string>

#include "tensor/dnnl_context.hpp"
#include "tensor/ops.hpp"
#include "tensor/ops/row_pieces.hpp"
#include "util/error.hpp"

namespace heed {
namespace {
using dnnl::memory;

template <class Fwd, class Bwd>
struct SoftmaxEntry {
  typename Fwd::primitive_desc fwd_pd;
  Fwd fwd;
  typename Bwd::primitive_desc bwd_pd;
  Bwd bwd;
};

template <class Fwd, class Bwd>
Var softmax_like(const Var& a, const char* name) {
  Tensor av = a.value().contiguous();
  const int64_t cols = av.dim(-1);
  if (cols == 0) throw Error(std::string(name) + " over an empty last axis " + shape_str(av.shape()));
  const int64_t rows = av.numel() / cols;
  Tensor out = Tensor::empty(av.shape());
  if (!needs_grad({&a})) {
    for_row_pieces(rows, [&](int64_t r0, int64_t n) {
      auto& fwd = dnnl_ctx::cached<Fwd>(std::string(name) + "_piece:" + std::to_string(n) + "x" + std::to_string(cols),
                                        [&] {
                                          memory::desc md({n, cols}, memory::data_type::f32, memory::format_tag::ab);
                                          return Fwd(typename Fwd::primitive_desc(
                                              typename Fwd::desc(dnnl::prop_kind::forward_inference, md, 1),
                                              dnnl_ctx::engine()));
                                        });
      memory::desc md({n, cols}, memory::data_type::f32, memory::format_tag::ab);
      auto& eng = dnnl_ctx::engine();
      fwd.execute(dnnl_ctx::stream(), {{DNNL_ARG_SRC, memory(md, eng, av.data() + r0 * cols)},
                                       {DNNL_ARG_DST, memory(md, eng, out.data() + r0 * cols)}});
    });
    dnnl_ctx::stream().wait();
    return Var(out, false);
  }
  std::string key = std::string(name) + ":" + std::to_string(rows) + "x" + std::to_string(cols);
  using Entry = SoftmaxEntry<Fwd, Bwd>;
  auto& e = dnnl_ctx::cached<Entry>(key, [&] {
    memory::desc md({rows, cols}, memory::data_type::f32, memory::format_tag::ab);
    typename Fwd::primitive_desc fpd(typename Fwd::desc(dnnl::prop_kind::forward_training, md, 1), dnnl_ctx::engine());
    typename Bwd::primitive_desc bpd(typename Bwd::desc(md, md, 1), dnnl_ctx::engine(), fpd);
    return Entry{fpd, Fwd(fpd), bpd, Bwd(bpd)};
  });
  auto& eng = dnnl_ctx::engine();
  e.fwd.execute(dnnl_ctx::stream(), {{DNNL_ARG_SRC, memory(e.fwd_pd.src_desc(), eng, av.data())},
                                     {DNNL_ARG_DST, memory(e.fwd_pd.dst_desc(), eng, out.data())}});
  dnnl_ctx::stream().wait();
  Var result(out, needs_grad({&a}));
  if (result.requires_grad()) {
    auto on = result.node_ptr();
    record_backward([a, out, on, key] {
      if (!on->grad.defined()) return;
      auto& e = *static_cast<Entry*>(dnnl_ctx::cache().entries.at(key).get());
      auto& eng = dnnl_ctx::engine();
      Tensor g = on->grad.contiguous();
      Tensor da = Tensor::empty(out.shape());
      e.bwd.execute(dnnl_ctx::stream(), {{DNNL_ARG_DST, memory(e.bwd_pd.dst_desc(), eng, out.data())},
                                         {DNNL_ARG_DIFF_DST, memory(e.bwd_pd.diff_dst_desc(), eng, g.data())},
                                         {DNNL_ARG_DIFF_SRC, memory(e.bwd_pd.diff_src_desc(), eng, da.data())}});
      dnnl_ctx::stream().wait();
      a.accumulate_grad(da);
    });
  }
  return result;
}

struct LayerNormEntry {
  dnnl::layer_normalization_forward::primitive_desc fwd_pd;
  dnnl::layer_normalization_forward fwd;
  dnnl::layer_normalization_backward::primitive_desc bwd_pd;
  dnnl::layer_normalization_backward bwd;
};

}  // namespace

Var softmax(const Var& a) { return softmax_like<dnnl::softmax_forward, dnnl::softmax_backward>(a, "softmax"); }
Var log_softmax(const Var& a) {
  return softmax_like<dnnl::logsoftmax_forward, dnnl::logsoftmax_backward>(a, "logsoftmax");
}

Var layer_norm(const Var& x, const Var& gamma, const Var& beta, float eps) {
  Tensor xv = x.value().contiguous();
  const int64_t cols = xv.dim(-1);
  if (cols == 0) throw Error("layer_norm over an empty last axis " + shape_str(xv.shape()));
  const int64_t rows = xv.numel() / cols;
  if (gamma.value().numel() != cols || beta.value().numel() != cols)
    throw Error("layer_norm: input " + shape_str(xv.shape()) + " with scale " + shape_str(gamma.shape()));
  const auto flags = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
  // eps in hex: std::to_string prints 6 decimals, so 1e-7 and 1e-8 would share a primitive.
  char eps_hex[32];
  std::snprintf(eps_hex, sizeof eps_hex, "%a", eps);
  if (!needs_grad({&x, &gamma, &beta})) {
    Tensor y = Tensor::empty(xv.shape()), gv = gamma.value().contiguous(), bv = beta.value().contiguous();
    const memory::desc vec({cols}, memory::data_type::f32, memory::format_tag::a);
    for_row_pieces(rows, [&](int64_t r0, int64_t n) {
      std::string piece_key = "layernorm_piece:" + std::to_string(n) + "x" + std::to_string(cols) + ":" + eps_hex;
      auto& fwd = dnnl_ctx::cached<dnnl::layer_normalization_forward>(piece_key, [&] {
        memory::desc md({n, cols}, memory::data_type::f32, memory::format_tag::ab);
        return dnnl::layer_normalization_forward(dnnl::layer_normalization_forward::primitive_desc(
            dnnl::layer_normalization_forward::desc(dnnl::prop_kind::forward_inference, md, eps, flags),
            dnnl_ctx::engine()));
      });
      memory::desc md({n, cols}, memory::data_type::f32, memory::format_tag::ab);
      auto& eng = dnnl_ctx::engine();
      fwd.execute(dnnl_ctx::stream(), {{DNNL_ARG_SRC, memory(md, eng, xv.data() + r0 * cols)},
                                       {DNNL_ARG_DST, memory(md, eng, y.data() + r0 * cols)},
                                       {DNNL_ARG_SCALE, memory(vec, eng, gv.data())},
                                       {DNNL_ARG_SHIFT, memory(vec, eng, bv.data())}});
    });
    dnnl_ctx::stream().wait();
    return Var(y, false);
  }
  std::string key = "layernorm:" + std::to_string(rows) + "x" + std::to_string(cols) + ":" + eps_hex;
  auto& e = dnnl_ctx::cached<LayerNormEntry>(key, [&] {
    memory::desc md({rows, cols}, memory::data_type::f32, memory::format_tag::ab);
    dnnl::layer_normalization_forward::primitive_desc fpd(
        dnnl::layer_normalization_forward::desc(dnnl::prop_kind::forward_training, md, eps, flags), dnnl_ctx::engine());
    dnnl::layer_normalization_backward::primitive_desc bpd(
        dnnl::layer_normalization_backward::desc(dnnl::prop_kind::backward, md, md, eps, flags), dnnl_ctx::engine(),
        fpd);
    return LayerNormEntry{fpd, dnnl::layer_normalization_forward(fpd), bpd, dnnl::layer_normalization_backward(bpd)};
  });
  auto& eng = dnnl_ctx::engine();
  Tensor y = Tensor::empty(xv.shape());
  Tensor mean_t = Tensor::empty({rows}), var_t = Tensor::empty({rows});
  Tensor gv = gamma.value().contiguous(), bv = beta.value().contiguous();
  e.fwd.execute(dnnl_ctx::stream(),
                {{DNNL_ARG_SRC, memory(e.fwd_pd.src_desc(), eng, xv.data())},
                 {DNNL_ARG_DST, memory(e.fwd_pd.dst_desc(), eng, y.data())},
                 {DNNL_ARG_MEAN, memory(e.fwd_pd.mean_desc(), eng, mean_t.data())},
                 {DNNL_ARG_VARIANCE, memory(e.fwd_pd.variance_desc(), eng, var_t.data())},
                 {DNNL_ARG_SCALE, memory({{cols}, memory::data_type::f32, memory::format_tag::a}, eng, gv.data())},
                 {DNNL_ARG_SHIFT, memory({{cols}, memory::data_type::f32, memory::format_tag::a}, eng, bv.data())}});
  dnnl_ctx::stream().wait();
  Var result(y, needs_grad({&x, &gamma, &beta}));
  if (result.requires_grad()) {
    auto on = result.node_ptr();
    record_backward([x, gamma, beta, xv, gv, bv, mean_t, var_t, on, key, cols] {
      if (!on->grad.defined()) return;
      auto& e = *static_cast<LayerNormEntry*>(dnnl_ctx::cache().entries.at(key).get());
      auto& eng = dnnl_ctx::engine();
      Tensor g = on->grad.contiguous();
      Tensor dx = Tensor::empty(xv.shape()), dgamma = Tensor::empty({cols}), dbeta = Tensor::empty({cols});
      memory::desc vec({cols}, memory::data_type::f32, memory::format_tag::a);
      e.bwd.execute(dnnl_ctx::stream(), {{DNNL_ARG_SRC, memory(e.bwd_pd.src_desc(), eng, xv.data())},
                                         {DNNL_ARG_DIFF_DST, memory(e.bwd_pd.diff_dst_desc(), eng, g.data())},
                                         {DNNL_ARG_MEAN, memory(e.bwd_pd.mean_desc(), eng, mean_t.data())},
                                         {DNNL_ARG_VARIANCE, memory(e.bwd_pd.variance_desc(), eng, var_t.data())},
                                         {DNNL_ARG_SCALE, memory(vec, eng, gv.data())},
                                         {DNNL_ARG_SHIFT, memory(vec, eng, bv.data())},
                                         {DNNL_ARG_DIFF_SRC, memory(e.bwd_pd.diff_src_desc(), eng, dx.data())},
                                         {DNNL_ARG_DIFF_SCALE, memory(vec, eng, dgamma.data())},
                                         {DNNL_ARG_DIFF_SHIFT, memory(vec, eng, dbeta.data())}});
      dnnl_ctx::stream().wait();
      x.accumulate_grad(dx);
      gamma.accumulate_grad(dgamma.reshape(gamma.shape()));
      beta.accumulate_grad(dbeta.reshape(beta.shape()));
    });
  }
  return result;
}

}  // namespace heed
