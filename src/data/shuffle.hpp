#pragma once
// Seeded shuffling that gives the same order with every standard library: std::mt19937_64's
// output sequence is fixed by the C++ standard, but std::shuffle and
// std::uniform_int_distribution are not, so we draw and shuffle ourselves.
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace heed {

// Uniform integer in [0, n) for n > 0, without modulo bias (rejection of the short last range).
inline uint64_t uniform_below(std::mt19937_64& rng, uint64_t n) {
  const uint64_t threshold = (0 - n) % n;  // 2^64 mod n: draws below it would favour small values
  for (;;) {
    const uint64_t r = rng();
    if (r >= threshold) return r % n;
  }
}

// Fisher–Yates: every permutation equally likely.
template <typename T>
void shuffle_in_place(std::vector<T>& items, std::mt19937_64& rng) {
  for (size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[uniform_below(rng, i)]);
}

}  // namespace heed
