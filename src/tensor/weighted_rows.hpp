#pragma once
// Weighted sums of a sentence's rows (attention contexts), shared by the training op
// attention_context and the beam-search step.
#include <cstdint>

namespace heed {

// c[g] += Σ_j w[g][j] · rows[j] for G rows g of one sentence (rows [S, D]), each element
// summed in order of j, so the result does not depend on G. Column blocks stay in registers
// across the source positions: c is read and written once, and the G rows read each value row
// once between them.
template <int G>
void add_weighted_rows(const float* const* w, const float* rows, int64_t S, int64_t D, float* const* c) {
  constexpr int64_t kBlock = 64;
  int64_t i0 = 0;
  for (; i0 + kBlock <= D; i0 += kBlock) {
    float acc[G][kBlock];
    for (int g = 0; g < G; ++g)
      for (int64_t i = 0; i < kBlock; ++i) acc[g][i] = c[g][i0 + i];
    for (int64_t j = 0; j < S; ++j) {
      bool any = false;
      for (int g = 0; g < G; ++g) any |= w[g][j] != 0.f;
      if (!any) continue;  // padding
      const float* h = rows + j * D + i0;
#pragma GCC unroll 4
      for (int g = 0; g < G; ++g) {
        const float wj = w[g][j];
#pragma omp simd
        for (int64_t i = 0; i < kBlock; ++i) acc[g][i] += wj * h[i];
      }
    }
    for (int g = 0; g < G; ++g)
      for (int64_t i = 0; i < kBlock; ++i) c[g][i0 + i] = acc[g][i];
  }
  for (; i0 < D; ++i0)
    for (int g = 0; g < G; ++g)
      for (int64_t j = 0; j < S; ++j)
        if (w[g][j] != 0.f) c[g][i0] += w[g][j] * rows[j * D + i0];
}

}  // namespace heed
