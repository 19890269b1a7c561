#include "nn/graph_attention_layer.hpp"

#include <cmath>
#include <vector>

#include "tensor/ops.hpp"
#include "util/error.hpp"

namespace heed {
namespace {

// g_h = W_h · drop_p(x) for dense x [N, F_in] → [N, H, F_out]. With dropout, the H masked copies
// of x go through one batched product; without, x meets all heads' weights side by side.
Var project_dense(const Var& x, const Var& w, float p, Rng& rng) {
  const int64_t N = x.dim(0), H = w.dim(0), in = w.dim(1), out = w.dim(2);
  if (p <= 0.f) {
    Var side_by_side = H == 1 ? reshape(w, {in, out}) : reshape(permute(w, {1, 0, 2}), {in, H * out});
    return reshape(matmul(x, side_by_side), {N, H, out});
  }
  std::vector<Var> dropped;
  for (int64_t h = 0; h < H; ++h) dropped.push_back(reshape(dropout(x, p, rng), {1, N, in}));
  Var per_head = matmul(H == 1 ? dropped[0] : concat(dropped, 0), w);  // [H, N, F_out]
  return H == 1 ? reshape(per_head, {N, 1, out}) : permute(per_head, {1, 0, 2});
}

}  // namespace

GraphAttentionLayer::GraphAttentionLayer(ParameterSet& params, const std::string& name, int64_t in, int64_t out,
                                         int64_t heads, Rng& init) {
  const float w_bound = std::sqrt(6.f / static_cast<float>(in + out));
  const float a_bound = std::sqrt(6.f / static_cast<float>(out + 1));
  W = params.add(name + ".W", uniform_tensor({heads, in, out}, w_bound, init));
  a1 = params.add(name + ".a1", uniform_tensor({heads, out}, a_bound, init));
  a2 = params.add(name + ".a2", uniform_tensor({heads, out}, a_bound, init));
  b1 = params.add(name + ".b1", Tensor::zeros({heads}));
  b2 = params.add(name + ".b2", Tensor::zeros({heads}));
  bias = params.add(name + ".bias", Tensor::zeros({heads, out}));
}

Var GraphAttentionLayer::operator()(const NodeFeatures& x, const Csr& neighbours, const Settings& settings,
                                    Rng& rng) const {
  if (x.columns() != W.dim(1) || x.rows() != neighbours.rows || neighbours.rows != neighbours.cols)
    throw Error("graph attention layer: input of " + std::to_string(x.rows()) + " x " + std::to_string(x.columns()) +
                " for weights " + shape_str(W.shape()) + " over " + std::to_string(neighbours.rows) + " nodes");
  const float p = settings.input_dropout;
  Var g = x.sparse ? sparse_multihead_linear(*x.sparse, W, p, rng) : project_dense(x.dense, W, p, rng);
  Var s = add(per_head_dot(g, a1), b1);
  Var t = add(per_head_dot(g, a2), b2);
  Var values = p > 0.f ? dropout(g, p, rng) : g;
  attention::Options options;
  options.dropout = settings.attention_dropout;
  options.rng = &rng;
  options.generic = settings.generic;
  Var mixed = attention::attend(attention::GraphScore{s, t, settings.negative_slope},
                                attention::NeighbourKeys{&neighbours}, values, options);
  return add(mixed, bias);
}

}  // namespace heed
