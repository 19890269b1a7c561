#pragma once
// The keep-or-drop decision of inverted dropout, shared by the dropout op and the fused ops that
// drop inside their own loops (graph attention coefficients, per-head input dropout), so that a
// fused op and its generic composition draw exactly the same mask from the same key.
#include <cstdint>

#include "tensor/random.hpp"
#include "util/error.hpp"

namespace heed {

// Element i is kept unless its counter-based draw falls below p. Backward draws the same numbers
// again instead of keeping a mask as large as x: activation memory is what limits the batch
// size, and a draw costs about as much as reading a stored mask back.
struct DropoutMask {
  uint64_t key;
  float p, keep_scale;
  DropoutMask(float p_, Rng& rng) : key(rng.next_key()), p(p_), keep_scale(1.f / (1.f - p_)) {
    if (p_ >= 1.f) throw Error("dropout probability must be below 1");
  }
  float operator()(int64_t i) const {
    return uniform_from_bits(splitmix64(key + static_cast<uint64_t>(i))) < p ? 0.f : keep_scale;
  }
  // Elements first … first + count − 1 into out, the same values as operator(), vectorised: one
  // at a time a draw costs about 14 ns (the keep-or-drop branch is unpredictable by design),
  // here about 1.2 ns. The 24 random bits go to float through int32 (exact), because GCC
  // vectorises that conversion and not the one from uint64.
  void fill(float* out, int64_t first, int64_t count) const {
    const uint64_t base = key + static_cast<uint64_t>(first);
    const float drop_below = p, keep = keep_scale;
#pragma omp simd
    for (int64_t j = 0; j < count; ++j) {
      const auto bits = static_cast<int32_t>(splitmix64(base + static_cast<uint64_t>(j)) >> 40);
      out[j] = static_cast<float>(bits) * 0x1.0p-24f < drop_below ? 0.f : keep;
    }
  }
};

}  // namespace heed
