#pragma once
// Shared by the *_two_threads tests, which run kernels on one thread and on two (the rest of the
// suite runs on one: ctest sets OMP_NUM_THREADS=1) and compare what comes out.
#include <omp.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace heed::test {

// Restores the thread count when a test case ends, a failed REQUIRE included.
struct ThreadCountGuard {
  const int saved = omp_get_max_threads();
  ~ThreadCountGuard() { omp_set_num_threads(saved); }
};

// Sets the thread count and checks a parallel region really gets that many threads (a dynamic
// adjustment or a thread limit would quietly turn the two-thread run into a one-thread one).
inline void use_threads(int threads) {
  omp_set_num_threads(threads);
  int team = 0;
#pragma omp parallel
  {
#pragma omp single
    team = omp_get_num_threads();
  }
  REQUIRE(team == threads);
}

// memcmp: −0 ≠ +0, and a NaN equals itself.
inline bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

// The index of the first element whose bits differ, or -1 (0 when the sizes differ).
inline int64_t first_difference(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return 0;
  for (size_t i = 0; i < a.size(); ++i)
    if (!same_bits(a[i], b[i])) return static_cast<int64_t>(i);
  return -1;
}

// max |a − b| over the vector, relative to its largest |a| (at least 1).
inline double max_relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double scale = 1, diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    scale = std::max(scale, std::fabs(static_cast<double>(a[i])));
    diff = std::max(diff, std::fabs(static_cast<double>(a[i]) - b[i]));
  }
  return diff / scale;
}

}  // namespace heed::test
