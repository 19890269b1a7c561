#pragma once
// Ops of a memory-augmented network (the Neural Turing Machine, Graves, Wayne & Danihelka 2014):
// the location-addressing steps after content addressing, and the write to memory. Content
// weights come from nn/attention (CosineScore); interpolation is add/sub/mul; a read is
// attention_context (tensor/ops.hpp). All are our own loops: the rows are short (N memory rows,
// W columns) and oneDNN has no circular convolution.
#include <cstdint>
#include <vector>

#include "tensor/autograd.hpp"

namespace heed {

// log(1 + exp(x)), computed without overflow: the key strength β and γ − 1 of a head.
Var softplus(const Var& x);

// Circular convolution of each row's weights with its shift distribution:
//   out[b, i] = Σ_{k=0}^{K−1} shift[b, k] · w[b, (i − (k − (K−1)/2)) mod N]
// w [B, N], shift [B, K] with K odd (shifts −(K−1)/2 .. +(K−1)/2) → [B, N]. K may exceed N:
// shifts then wrap onto the same rows and their weights add.
Var circular_shift(const Var& w, const Var& shift);

// Sharpening out[b, i] = w[b, i]^γ_b / Σ_j w[b, j]^γ_b, computed in log space as
// softmax_i(γ_b · log(w[b, i] + ε)) (ε = 1e-12) so that rows of tiny or zero weights stay
// finite. w [B, N] ≥ 0, gamma [B, 1] (≥ 1 in the model) → [B, N].
Var sharpen(const Var& w, const Var& gamma);

// One head's write, erase then add:
//   out[b, i, j] = memory[b, i, j] · (1 − w[b, i] · erase[b, j]) + w[b, i] · add[b, j]
// memory [B, N, W], w [B, N], erase and add [B, W] → [B, N, W].
Var memory_write(const Var& memory, const Var& w, const Var& erase, const Var& add);

// Rows of `next` where keep[b] is 1, rows of `previous` where it is 0, exactly (no arithmetic):
// a recurrence that must not move at a sentence's padded positions. Both of one shape, first
// axis B = keep.size(); gradients go to the tensor each row came from.
Var select_rows(const std::vector<uint8_t>& keep, const Var& next, const Var& previous);

}  // namespace heed
