#pragma once
// Multi-head attention (Vaswani et al. 2017) with PyTorch's parameters and names
// (nn.MultiheadAttention): q, k, v from one stacked in-projection, h heads of scaled dot-product
// attention (nn/attention.hpp) side by side, the heads concatenated and projected out.
//   MHA(Q, K, V) = Concat_k softmax((Q W_qᵏ + b_qᵏ)/√d_h · (K W_kᵏ + b_kᵏ)ᵀ + mask) (V W_vᵏ + b_vᵏ) · W_oᵀ + b_o
#include <string>
#include <vector>

#include "nn/attention.hpp"
#include "nn/layers.hpp"

namespace heed {

struct MultiHeadAttention {
  Var in_proj_weight, in_proj_bias;  // [3d, d], [3d]: W_q, W_k, W_v stacked; head k = rows k·d_h…
  Linear out_proj;
  int64_t heads = 1;

  MultiHeadAttention() = default;
  // Xavier-uniform weights, zero biases (the Transformer reference's initialisation).
  MultiHeadAttention(ParameterSet& params, const std::string& name, int64_t d, int64_t heads, Rng& rng);

  // [B, L, parts·d] (projections side by side) → `parts` tensors [B·h, L, d_h], one permuting copy.
  std::vector<Var> split_heads(const Var& x, int64_t parts) const;
  // q [B·h, T, d_h], k and v [B·h, S, d_h]; mask (1 = not a key) broadcasts against [B, h, T, S].
  // All heads at once, heads concatenated, then out_proj → [B, T, d]. options.weights receives
  // the coefficients as [B, h, T, S].
  Var attend(const Var& q, const Var& k, const Var& v, int64_t batch, const Tensor& mask,
             const attention::Options& options) const;
};

}  // namespace heed
