#pragma once
// Seeded random numbers for initialisation and dropout. Counter-based (splitmix64 of seed and
// position), so a dropout mask is the same whatever the thread count that draws it, and the
// whole generator state is two integers (saved with the trainer state for exact resume).
#include <cstdint>

#include "tensor/tensor.hpp"

namespace heed {

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in [0, 1) from 24 random bits.
inline float uniform_from_bits(uint64_t bits) { return static_cast<float>(bits >> 40) * 0x1.0p-24f; }

class Rng {
 public:
  explicit Rng(uint64_t seed = 1) : seed_(seed) {}
  uint64_t seed() const { return seed_; }
  uint64_t counter() const { return counter_; }
  void set_state(uint64_t seed, uint64_t counter) {
    seed_ = seed;
    counter_ = counter;
  }

  uint64_t next_u64() { return splitmix64(seed_ ^ splitmix64(counter_++)); }
  float uniform() { return uniform_from_bits(next_u64()); }
  float uniform(float lo, float hi) { return lo + (hi - lo) * uniform(); }
  float normal(float mean, float stddev);  // Box-Muller
  // A fresh key for a block of independent draws: element i of the block uses splitmix64(key + i).
  uint64_t next_key() { return next_u64(); }

  void fill_uniform(const Tensor& t, float lo, float hi);
  void fill_normal(const Tensor& t, float mean, float stddev);

 private:
  uint64_t seed_, counter_ = 0;
};

}  // namespace heed
