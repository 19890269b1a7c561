// Linked into the tests whose file name ends in _bf16: they need bf16 dot products (see
// catch_main.cpp).
#include "tensor/precision.hpp"

const char* heed_test_skip_reason() {
  return heed::cpu_has_bf16()
             ? nullptr
             : "this CPU has no bf16 dot products (avx512_bf16); these tests run on a CPU that has them";
}
