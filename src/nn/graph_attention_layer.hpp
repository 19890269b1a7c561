#pragma once
// One graph attention layer (Veličković et al., ICLR 2018) as the authors' code computes it
// (utils/layers.py attn_head), with the parameters of its PyTorch port (torch_gat.py), H heads:
//   g_h    = W_h · drop_p(x)                    every head drops its own input mask
//   s_i    = a₁ₕ·g_hi + b₁ₕ,  t_j = a₂ₕ·g_hj + b₂ₕ   (aᵀ[g_i ‖ g_j] split in two; the biases b₁, b₂
//                                                 are the reference's, not the paper's)
//   out_hi = Σ_{j ∈ N(i)} drop_pa(α_hij) · drop_p(g_hj) + c_h,  α = softmax_j LeakyReLU(s_i + t_j)
// N(i) are the neighbour lists given (the caller adds self-loops). The attention itself is
// nn/attention's GraphScore over NeighbourKeys. The activation and the merging of heads
// (concatenation or mean) belong to the model.
#include <string>

#include "nn/attention.hpp"
#include "nn/parameters.hpp"
#include "tensor/graph_ops.hpp"

namespace heed {

// A layer's input: sparse rows (bag-of-words features) or a dense [N, F] activation.
struct NodeFeatures {
  const SparseRows* sparse = nullptr;
  Var dense;
  int64_t rows() const { return sparse ? sparse->pattern.rows : dense.dim(0); }
  int64_t columns() const { return sparse ? sparse->pattern.cols : dense.dim(1); }
};

struct GraphAttentionLayer {
  Var W;       // [H, F_in, F_out]
  Var a1, a2;  // [H, F_out]
  Var b1, b2;  // [H]
  Var bias;    // [H, F_out]: c

  GraphAttentionLayer() = default;
  // TF1's defaults for the reference's 1×1 convolutions: W_h ~ U(±√(6/(F_in + F_out))),
  // a₁ₕ, a₂ₕ ~ U(±√(6/(F_out + 1))), biases 0.
  GraphAttentionLayer(ParameterSet& params, const std::string& name, int64_t in, int64_t out, int64_t heads, Rng& init);

  struct Settings {
    float input_dropout = 0.f;      // p on the input and on g (0 when not training)
    float attention_dropout = 0.f;  // on α (0 when not training)
    float negative_slope = 0.2f;
    bool generic = false;  // nn/attention's generic path (tests)
  };
  // x [N, F_in] → [N, H, F_out], before the activation. Draws its dropout masks from rng.
  Var operator()(const NodeFeatures& x, const Csr& neighbours, const Settings& settings, Rng& rng) const;

  int64_t heads() const { return W.dim(0); }
};

}  // namespace heed
