// A packed weight read at another thread count than it was packed at: oneDNN picks the blocked
// layout by the thread count a primitive is made for (e.g. 16a32b at three threads, 16a64b at
// one), and translate packs the step weights on the main thread, then decodes with one thread per
// worker. Every product must still read the weight right: the same values as a weight packed at
// the reading thread count, fp32 and int8, for thread counts 1 … 4 either way.
#include <string>
#include <utility>
#include <vector>

#include "../two_threads.hpp"
#include "check_helpers.hpp"

using namespace heed;
using heed::test::max_relative_difference;
using heed::test::random_tensor;
using heed::test::ThreadCountGuard;

namespace {

// x · wᵀ + bias with w packed at `pack_threads` and multiplied at `read_threads` (threads set on
// this thread: the primitives are cached per thread count).
std::vector<float> product(const Tensor& x, const Tensor& w, const Tensor& bias, bool int8, int pack_threads,
                           int read_threads) {
  omp_set_num_threads(pack_threads);
  const PackedWeight packed = int8 ? pack_weight_int8(w) : pack_weight(w);
  omp_set_num_threads(read_threads);
  return linear(x, packed, bias).to_vector();
}

}  // namespace

TEST_CASE("a weight packed at one thread count is read right at any other") {
  ThreadCountGuard guard;
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{192, 128}, {128, 192}, {512, 256}, {1000, 64}, {36, 20}};
  for (const auto& [out, in] : shapes)
    for (const bool int8 : {false, true})
      for (const int64_t rows : {1, 5, 32, 45}) {
        const Tensor x = random_tensor({rows, in}, 1 + rows), w = random_tensor({out, in}, 2 + out),
                     bias = random_tensor({out}, 3 + in);
        for (int pack_threads = 1; pack_threads <= 4; ++pack_threads)
          for (int read_threads = 1; read_threads <= 4; ++read_threads) {
            if (pack_threads == read_threads) continue;
            const std::vector<float> want = product(x, w, bias, int8, read_threads, read_threads);
            const std::vector<float> got = product(x, w, bias, int8, pack_threads, read_threads);
            INFO("w [" << out << ", " << in << "], " << rows << " rows, " << (int8 ? "int8" : "fp32") << ", packed at "
                       << pack_threads << " threads, read at " << read_threads);
            CHECK(max_relative_difference(want, got) < 1e-5);
          }
      }
}
