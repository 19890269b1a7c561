#pragma once
// Attention of one new query position per row over cached keys and values: the inner loop of
// incremental Transformer decoding (beam search), without autograd. The caches keep room for
// more positions than are used, so appending a position is a copy of one row, not of the cache.
// Beams of one sentence can share its cache rows (cross-attention over the encoder output).
#include <cstdint>

#include "tensor/tensor.hpp"

namespace heed {

// Rows n < N, cache rows m = kv_row[n] (m = n when kv_row is null), heads k < h, head width d_h,
// used positions j < len:
//   p[n,k,j] = softmax_j((q[n,k] / √d_h) · K[m,k,j]),  p = 0 exactly where key_pad[m, j] ≠ 0
//   out[n, k·d_h + i] = Σ_j p[n,k,j] · V[m,k,j,i]          (heads side by side, as out_proj wants)
// q: row n starts at q + n·q_stride and holds h·d_h floats (q may point into a fused q|k|v row).
// keys, values: dense [M, h, capacity, d_h], capacity ≥ len. key_pad: [M, len] or null.
// out: [N, h·d_h] dense. mean_probs: [N, len], p averaged over heads, or null.
void cached_attention(const float* q, int64_t q_stride, int64_t N, const int32_t* kv_row, const Tensor& keys,
                      const Tensor& values, int64_t len, const float* key_pad, float* out, float* mean_probs);

}  // namespace heed
