#include "nn/multi_head_attention.hpp"

namespace heed {

MultiHeadAttention::MultiHeadAttention(ParameterSet& params, const std::string& name, int64_t d, int64_t heads_,
                                       Rng& rng)
    : in_proj_weight(params.add(name + ".in_proj_weight", xavier_uniform_tensor({3 * d, d}, rng))),
      in_proj_bias(params.add(name + ".in_proj_bias", Tensor::zeros({3 * d}))),
      out_proj(xavier_linear(params, name + ".out_proj", d, d, rng)),
      heads(heads_) {}

std::vector<Var> MultiHeadAttention::split_heads(const Var& x, int64_t parts) const {
  const int64_t B = x.dim(0), L = x.dim(1), dh = x.dim(2) / (parts * heads);
  Var p = permute(reshape(x, {B, L, parts, heads, dh}), {2, 0, 3, 1, 4});  // [parts, B, h, L, d_h]
  std::vector<Var> out;
  for (int64_t i = 0; i < parts; ++i) out.push_back(reshape(slice_rows(p, i, i + 1), {B * heads, L, dh}));
  return out;
}

Var MultiHeadAttention::attend(const Var& q, const Var& k, const Var& v, int64_t batch, const Tensor& mask,
                               const attention::Options& options) const {
  const int64_t B = batch, T = q.dim(1), S = k.dim(1), dh = q.dim(2);
  Var mixed = attention::attend(attention::DotProductScore{q, k}, attention::DenseKeys{mask, {B, heads, T, S}}, v,
                                options);  // [B·h, T, d_h]
  Var merged = reshape(permute(reshape(mixed, {B, heads, T, dh}), {0, 2, 1, 3}), {B, T, heads * dh});
  return out_proj(merged);
}

}  // namespace heed
