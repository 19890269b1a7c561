#pragma once
// Rows of H heads × F features, each head with its own weight: the inner loops of the sparse
// graph ops (a node's H·F values added into another's, weighted per head; per-head dot
// products). Heads are small (GAT: 8 features): as loops over F, GCC spent 18 instructions a
// head on bookkeeping and alias checks for one 8-float multiply-add (counted with callgrind).
// Heads of 8 therefore run on 8-float vectors (GCC's vector extension: one AVX op, two SSE
// ops), other widths as plain loops.
#include <cstdint>
#include <cstring>

namespace heed {
namespace head_rows_detail {

typedef float Float8 __attribute__((vector_size(32)));

inline Float8 load8(const float* p) {
  Float8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store8(float* p, Float8 v) { std::memcpy(p, &v, sizeof v); }

}  // namespace head_rows_detail

// out[h·F + f] += weight[h] · row[h·F + f]
inline void add_weighted_heads(float* out, const float* row, const float* weight, int64_t H, int64_t F) {
  using namespace head_rows_detail;
  if (F == 8) {
    for (int64_t h = 0; h < H; ++h) store8(out + 8 * h, load8(out + 8 * h) + weight[h] * load8(row + 8 * h));
    return;
  }
  for (int64_t h = 0; h < H; ++h)
    for (int64_t f = 0; f < F; ++f) out[h * F + f] += weight[h] * row[h * F + f];
}

// result[h] = Σ_f a[h·F + f] · b[h·F + f]
inline void dot_per_head(float* result, const float* a, const float* b, int64_t H, int64_t F) {
  using namespace head_rows_detail;
  if (F == 8) {
    for (int64_t h = 0; h < H; ++h) {
      const Float8 p = load8(a + 8 * h) * load8(b + 8 * h);
      result[h] = ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
    }
    return;
  }
  for (int64_t h = 0; h < H; ++h) {
    float d = 0;
    for (int64_t f = 0; f < F; ++f) d += a[h * F + f] * b[h * F + f];
    result[h] = d;
  }
}

}  // namespace heed
