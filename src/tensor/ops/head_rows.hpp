#pragma once
// Rows of H heads × F features, each head scaled by its own weight: the inner loop of the sparse
// graph ops (a node's H·F values added into another's, weighted per head). Heads are small
// (GAT: 8 features), so each runs as blocks of 8 floats — one vector op — and a remainder; a
// loop over F of unknown length would not vectorise usefully at that size.
#include <cstdint>

namespace heed {

// out[h·F + f] += weight[h] · row[h·F + f]
inline void add_weighted_heads(float* out, const float* row, const float* weight, int64_t H, int64_t F) {
  for (int64_t h = 0; h < H; ++h) {
    const float w = weight[h];
    float* o = out + h * F;
    const float* r = row + h * F;
    int64_t f = 0;
    for (; f + 8 <= F; f += 8)
#pragma omp simd
      for (int64_t u = 0; u < 8; ++u) o[f + u] += w * r[f + u];
    for (; f < F; ++f) o[f] += w * r[f];
  }
}

// Asks for the cache lines of a row of `floats` floats that a loop will read a few entries on:
// the rows sparse ops read (a weight row per non-zero, a neighbour's values per edge) are
// scattered, and without this each waits for memory in turn.
inline void prefetch_row(const float* row, int64_t floats) {
  for (int64_t f = 0; f < floats; f += 16) __builtin_prefetch(row + f);
}
constexpr int64_t kPrefetchAhead = 8;  // entries

// dot[h] = Σ_f a[h·F + f] · b[h·F + f]
inline void dot_per_head(float* dot, const float* a, const float* b, int64_t H, int64_t F) {
  for (int64_t h = 0; h < H; ++h) {
    const float* x = a + h * F;
    const float* y = b + h * F;
    float d = 0;
#pragma omp simd reduction(+ : d)
    for (int64_t f = 0; f < F; ++f) d += x[f] * y[f];
    dot[h] = d;
  }
}

}  // namespace heed
