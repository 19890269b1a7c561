// The tests' main. Tests whose file name ends in _bf16 are built with HEED_TEST_NEEDS_BF16: on a
// CPU without bf16 dot products they exit with 77, which CTest reports as skipped, saying why.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>

#ifdef HEED_TEST_NEEDS_BF16
#include "tensor/precision.hpp"
#endif

int main(int argc, char** argv) {
#ifdef HEED_TEST_NEEDS_BF16
  if (!heed::cpu_has_bf16()) {
    std::puts("skipped: this CPU has no bf16 dot products (avx512_bf16); these tests run on a CPU that has them");
    return 77;
  }
#endif
  return Catch::Session().run(argc, argv);
}
