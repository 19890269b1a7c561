#pragma once
// Attention, stated once. Every attention model in heed is this one mechanism applied to some set
// of keys: for a query i and each key j of its key set K(i),
//
//   e_ij  = score(query_i, key_j)                    a score function below
//   α_ij  = exp(e_ij) / Σ_{k ∈ K(i)} exp(e_ik)       softmax over the key set
//   α̃_ij = dropout(α_ij)                            training only (options.dropout)
//   out_i = Σ_{j ∈ K(i)} α̃_ij · value_j             the weighted sum of the values
//
// Score functions:
//   AdditiveScore     v · tanh(q_i + k_j)                      Bahdanau (the GRU decoder)
//   DotProductScore   q_i · k_j / √d                           the Transformer, per head
//   GraphScore        LeakyReLU(s_i + t_j)                     GAT: aᵀ[Wh_i ‖ Wh_j] with
//                                                              s_i = a₁·Wh_i, t_j = a₂·Wh_j
//   CosineScore       β_i · cos(q_i, k_j)                      content addressing (NTM)
// Key sets:
//   DenseKeys         all positions of a sequence (or all nodes), minus a mask: padding,
//                     future positions, non-edges
//   NeighbourKeys     a node's neighbours as CSR lists (tensor/graph_ops.hpp): O(edges)
//
// attend() takes a score and a key set. Its generic path builds the formula above from ops: a
// scores tensor, the mask, softmax, dropout, the weighted sum. Where a fused kernel computes the
// same in fewer passes it runs instead (options.generic forces the generic path):
//   AdditiveScore × DenseKeys     additive_attention_scores + attention_context (tensor/ops)
//   GraphScore × NeighbourKeys    graph_attention (tensor/graph_ops)
// DotProductScore × DenseKeys is the generic path itself (all heads' scores and sums are single
// batched matmuls). Decoding has its own fused, autograd-free steps in models/
// (additive_attention_step, cached_attention). tests/nn and tests/models check every fused path
// against the generic one, values and gradients.
#include "tensor/autograd.hpp"
#include "tensor/graph_ops.hpp"
#include "tensor/random.hpp"

namespace heed::attention {

// ---- scores ----
struct AdditiveScore {  // one query per sequence
  Var query;            // [B, A]: W_a s + b_a
  Var keys;             // [B, S, A]: U_a h_j
  Var v;                // A elements (any shape)
};
struct DotProductScore {  // G = batch · heads groups of T queries
  Var query;              // [G, T, d]
  Var keys;               // [G, S, d]
};
struct GraphScore {
  Var source;  // [N, H]: s_i, the query node's half of aᵀ[Wh_i ‖ Wh_j] (+ its bias)
  Var target;  // [N, H]: t_j, the neighbour's half
  float negative_slope = 0.2f;
};
struct CosineScore {  // one query per sequence (a read head over memory rows)
  Var query;          // [B, D]
  Var keys;           // [B, S, D]
  Var strength;       // [B]: β ≥ 0 (the caller applies softplus or whatever keeps it positive)
};

// ---- key sets ----
struct DenseKeys {
  // 0/1, 1 = not a key (padding, a future position, a non-edge); broadcast against the scores
  // viewed in `frame` (its own shape when frame is empty). May be undefined: every key counts.
  Tensor mask;
  Shape frame;
};
struct NeighbourKeys {
  const Csr* lists = nullptr;  // row i: the keys of query i; must live until backward has run
};

struct Options {
  float dropout = 0.f;        // on the coefficients
  Rng* rng = nullptr;         // draws the dropout mask (needed when dropout > 0)
  bool generic = false;       // the generic path even where a fused kernel exists
  Tensor* weights = nullptr;  // receives α, before dropout, in the scores' layout
};

// Shapes (values → result):
//   AdditiveScore, CosineScore × DenseKeys:  values [B, S, D] → [B, D]; scores [B, S]
//   DotProductScore × DenseKeys:             values [G, S, D] → [G, T, D]; scores [G, T, S]
//   GraphScore × DenseKeys:                  values [N, H, F] → [N, H, F]; scores [H, N, N]
//   GraphScore × NeighbourKeys:              values [N, H, F] → [N, H, F]; scores [edges, H]
Var attend(const AdditiveScore& score, const DenseKeys& keys, const Var& values, const Options& options = {});
Var attend(const DotProductScore& score, const DenseKeys& keys, const Var& values, const Options& options = {});
Var attend(const CosineScore& score, const DenseKeys& keys, const Var& values, const Options& options = {});
Var attend(const GraphScore& score, const DenseKeys& keys, const Var& values, const Options& options = {});
Var attend(const GraphScore& score, const NeighbourKeys& keys, const Var& values, const Options& options = {});

// The coefficients α of attend(CosineScore) as a Var [B, S] (after dropout, before the weighted
// sum): the NTM's content weights, which its location addressing transforms before a read or a
// write uses them.
Var coefficients(const CosineScore& score, const DenseKeys& keys, const Options& options = {});

}  // namespace heed::attention
