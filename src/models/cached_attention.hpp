#pragma once
// Attention of one new query position per row over keys and values computed earlier: the inner
// loop of incremental Transformer decoding (beam search), without autograd. Keys and values stay
// where their projection wrote them and are found through a table of row indices, so a beam that
// continues another beam's history, or several beams reading one sentence's encoder output, never
// copy a key or a value.
#include <cstdint>

namespace heed {

// Where the keys and values of `len` positions live. For row n and position j, the h·d_h floats
// of the key are at keys[j] + rows[n·len + j]·row_stride (heads side by side), the value likewise
// at values[j] + rows[n·len + j]·row_stride.
struct AttentionMemory {
  const float* const* keys = nullptr;    // [len] base of position j
  const float* const* values = nullptr;  // [len]
  const int32_t* rows = nullptr;         // [N, len]
  int64_t row_stride = 0;                // floats from one row to the next at a position
  int64_t len = 0;
};

// Rows n < N, heads k < h, head width d_h, positions j < len:
//   p[n,k,j] = softmax_j((q[n,k] / √d_h) · key[n,j,k]),  p = 0 exactly where key_pad[n·len + j] ≠ 0
//   out[n, k·d_h + i] = Σ_j p[n,k,j] · value[n,j,k,i]     (heads side by side, as out_proj wants)
// q: row n starts at q + n·q_stride and holds h·d_h floats (q may point into a fused q|k|v row).
// key_pad: [N, len] or null. out: [N, h·d_h] dense. mean_probs: [N, len], p averaged over heads,
// or null.
void cached_attention(const float* q, int64_t q_stride, int64_t N, int64_t heads, int64_t head_dim,
                      const AttentionMemory& memory, const float* key_pad, float* out, float* mean_probs);

}  // namespace heed
