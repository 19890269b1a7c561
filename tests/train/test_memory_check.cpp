// A model too large to train here is one error naming its size and where the size came from.
#include <catch2/catch.hpp>

#include "train/memory_check.hpp"
#include "util/error.hpp"

using namespace heed;

TEST_CASE("check_trainable refuses a model whose training state exceeds the memory, naming the sizes") {
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  CHECK_NOTHROW(check_trainable(1e9, "from here", 16 * kGiB));  // 16 bytes a parameter: 14.9 GiB
  CHECK_THROWS_WITH(check_trainable(2e9, "from here", 16 * kGiB),
                    "the model would have 2e+09 parameters, 29.8 GiB to train (weights, gradients and Adam moments), "
                    "more than this machine's 16 GiB of memory: from here");
  CHECK_THROWS_AS(check_trainable(1e30, "", 0), Error);  // this machine's memory
}
