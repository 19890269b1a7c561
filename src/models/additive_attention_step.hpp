#pragma once
// One decoder step of additive (Bahdanau) attention for beam search, without autograd. Beams of
// one sentence share its encoder rows: row n reads encoder row source_row[n], so following a
// beam never copies the annotations or their keys.
#include <cstdint>
#include <vector>

#include "tensor/tensor.hpp"

namespace heed {

// Rows n < N, encoder rows b = source_row[n], source positions j < S:
//   e[n,j] = v · tanh(query[n] + keys[b,j])        (query holds W_a s + b_a)
//   alpha[n,j] = softmax_j(e[n,j]) over j with key_pad[b,j] == 0, exactly 0 elsewhere
//   context[n] += Σ_j alpha[n,j] · values[b,j]
// query [N, A] (rows may be strided, e.g. columns of a wider product), keys [B, S, A], v [A]
// (any shape of A elements), values [B, S, Dv], key_pad [B, S], context [N, Dv] (given: the sum
// is added to what it holds); writes alpha [N, S] (allocated here). The scores and weights are
// the arithmetic of additive_attention_scores + masked softmax in training.
void additive_attention_step(const Tensor& query, const Tensor& keys, const Tensor& v, const Tensor& values,
                             const Tensor& key_pad, const std::vector<int32_t>& source_row, Tensor& alpha,
                             const Tensor& context);

}  // namespace heed
