// The precision machinery that runs on every CPU: bf16 rounding (nearest even, NaN kept), the
// choice of precision with the CPU's capability mocked, and where weights' bf16 copies are found.
// The bf16 products themselves are in test_products_bf16.cpp (skipped on a CPU without bf16).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "tensor/precision.hpp"
#include "util/error.hpp"

using namespace heed;

namespace {
uint16_t rounded(float f) {
  uint16_t out;
  round_to_bf16(&f, 1, &out);
  return out;
}
float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
}  // namespace

TEST_CASE("bf16 rounding: nearest, ties to even, specials kept", "[precision]") {
  CHECK(rounded(1.f) == 0x3f80);
  CHECK(rounded(-2.f) == 0xc000);
  CHECK(rounded(0.f) == 0x0000);
  // 1 + 2⁻⁸ lies halfway between 1 and 1 + 2⁻⁷: ties go to the even pattern (1)
  CHECK(rounded(from_bits(0x3f808000)) == 0x3f80);
  // halfway above an odd pattern rounds up to the even one
  CHECK(rounded(from_bits(0x3f818000)) == 0x3f82);
  // just above halfway rounds up
  CHECK(rounded(from_bits(0x3f808001)) == 0x3f81);
  CHECK(rounded(std::numeric_limits<float>::infinity()) == 0x7f80);
  CHECK(std::isnan(bf16_to_float(rounded(std::numeric_limits<float>::quiet_NaN()))));
  // a NaN whose payload is only in the low bits must not round to infinity
  CHECK(std::isnan(bf16_to_float(rounded(from_bits(0x7f800001)))));
  // the largest finite float rounds up to infinity, as IEEE rounding does
  CHECK(std::isinf(bf16_to_float(rounded(std::numeric_limits<float>::max()))));
  // relative error of any normal value is at most 2⁻⁹ (half a unit in the 8-bit significand)
  for (float v : {3.14159f, -0.001234f, 12345.678f, 1e-20f}) CHECK(std::fabs(bf16_to_float(rounded(v)) - v) <= std::fabs(v) * 0x1p-9f);
}

TEST_CASE("precision choice: auto follows the CPU, bf16 without it is a usage error naming the field",
          "[precision]") {
  CHECK(resolve_precision(PrecisionRequest::fp32, true, "f") == MatmulPrecision::fp32);
  CHECK(resolve_precision(PrecisionRequest::auto_, true, "f") == MatmulPrecision::bf16);
  CHECK(resolve_precision(PrecisionRequest::auto_, false, "f") == MatmulPrecision::fp32);
  CHECK(resolve_precision(PrecisionRequest::bf16, true, "f") == MatmulPrecision::bf16);
  try {
    resolve_precision(PrecisionRequest::bf16, false, "training.precision");
    FAIL("no error");
  } catch (const UsageError& e) {
    CHECK(std::string(e.what()).find("training.precision is bf16") == 0);
    CHECK(std::string(e.what()).find("avx512_bf16") != std::string::npos);
  }
}

TEST_CASE("bf16 weight copies: found inside a weight's buffer only, refreshed on demand", "[precision]") {
  Tensor w = Tensor::from_vector({2, 3}, {1.f, 2.f, 3.f, 4.f, 5.f, 1.00390625f});
  Tensor other = Tensor::from_vector({4}, {1.f, 2.f, 3.f, 4.f});
  CHECK(find_bf16_copy(w.data(), 6) == nullptr);  // nothing registered
  {
    Bf16WeightCopies copies({w});
    CHECK(copies.refreshes() == 1);
    const uint16_t* all = find_bf16_copy(w.data(), 6);
    REQUIRE(all != nullptr);
    CHECK(bf16_to_float(all[5]) == 1.f);  // rounded
    const uint16_t* row1 = find_bf16_copy(w.data() + 3, 3);
    REQUIRE(row1 == all + 3);
    CHECK(find_bf16_copy(w.data() + 3, 4) == nullptr);  // runs past the end
    CHECK(find_bf16_copy(other.data(), 4) == nullptr);
    w.data()[0] = 7.f;
    CHECK(bf16_to_float(all[0]) == 1.f);  // a snapshot until refreshed
    refresh_bf16_weight_copies();
    CHECK(copies.refreshes() == 2);
    CHECK(bf16_to_float(all[0]) == 7.f);
    CHECK_THROWS_AS(Bf16WeightCopies({other}), Error);  // one set at a time
  }
  CHECK(find_bf16_copy(w.data(), 6) == nullptr);  // gone with the set
  refresh_bf16_weight_copies();                   // no set: nothing to do
}

TEST_CASE("bf16 rounding of arrays (the CPU's conversion where it has one) equals value by value", "[precision]") {
  // values by value take the portable path (shorter than one vector); arrays the vector path
  std::vector<float> values(100003);
  uint32_t state = 12345;
  for (float& v : values) {
    state = state * 1664525u + 1013904223u;
    v = from_bits((state & 0x807fffffu) | (((state >> 23) % 200 + 27) << 23));  // normal, any sign and mantissa
  }
  values[5] = std::numeric_limits<float>::infinity();
  values[6] = -std::numeric_limits<float>::infinity();
  values[7] = std::numeric_limits<float>::quiet_NaN();
  values[8] = from_bits(0x3f808000);  // a tie
  values[9] = -0.f;
  std::vector<uint16_t> all(values.size());
  round_to_bf16(values.data(), static_cast<int64_t>(values.size()), all.data());
  int64_t differ = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    const uint16_t one = rounded(values[i]);
    const bool same = one == all[i] || (std::isnan(values[i]) && std::isnan(bf16_to_float(all[i])));
    differ += same ? 0 : 1;
  }
  CHECK(differ == 0);
}
