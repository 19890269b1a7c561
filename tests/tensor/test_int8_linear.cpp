// int8 products against fp32: row quantization round-trips within half a scale step, and the
// int8 x · wᵀ stays within the bound its activation rounding allows of the fp32 product with the
// same (dequantized) weights, for many shapes, with bias and accumulation.
#include <catch2/catch.hpp>
#include <cmath>

#include "tensor/ops.hpp"
#include "tensor/quantize.hpp"
#include "tensor/random.hpp"
#include "util/error.hpp"

using namespace heed;

TEST_CASE("row quantization: within half a step, extremes at ±127, zero rows kept", "[int8]") {
  Rng rng(3);
  Tensor a = Tensor::empty({6, 37});
  rng.fill_normal(a, 0.f, 2.f);
  for (int64_t i = 0; i < 37; ++i) a.data()[2 * 37 + i] = 0.f;  // a row of zeros
  a.data()[4 * 37 + 5] = -50.f;                                  // an outlier sets its row's scale
  const QuantizedRows q = quantize_rows(a);
  const Tensor back = dequantize_rows(q);
  CHECK(q.scales[2] == 1.f);
  CHECK(q.scales[4] == Approx(50.f / 127.f));
  CHECK(q.values[4 * 37 + 5] == -127);
  for (int64_t r = 0; r < 6; ++r) {
    int extreme = 0;
    for (int64_t c = 0; c < 37; ++c) {
      const int8_t v = q.values[r * 37 + c];
      CHECK(v >= -127);
      extreme = std::max(extreme, std::abs(int(v)));
      CHECK(std::fabs(back.data()[r * 37 + c] - a.data()[r * 37 + c]) <= q.scales[r] / 2 * 1.0001f);
    }
    CHECK(extreme == (r == 2 ? 0 : 127));
  }
  // quantizing the dequantized values gives the same int8 values (an int8 model reloads exactly)
  const QuantizedRows again = quantize_rows(back);
  CHECK(again.values == q.values);
}

TEST_CASE("int8 linear: exact integer sums, within the activation-rounding bound of the fp32 product", "[int8]") {
  INFO("weights on " << int8_weight_levels() << " levels on this CPU");
  Rng rng(11);
  for (const int64_t in : {16, 100, 512}) {
    for (const int64_t out : {8, 300}) {
      Tensor w = Tensor::empty({out, in}), bias = Tensor::empty({out});
      rng.fill_normal(w, 0.f, 0.1f);
      rng.fill_normal(bias, 0.f, 1.f);
      const PackedWeight int8 = pack_weight_int8(w);
      const Tensor dequantized = dequantized_weight(int8);
      const PackedWeight fp32 = pack_weight(dequantized);  // the same weights, dequantized
      for (const int64_t rows : {1, 5, 32, 77}) {
        Tensor x = Tensor::empty({rows, in});
        rng.fill_normal(x, 0.f, 1.f);
        const Tensor y8 = linear(x, int8, bias), y32 = linear(x, fp32, bias);
        // accumulation adds onto what is there
        Tensor acc = Tensor::full({rows, out}, 0.5f);
        linear_into(acc, x, int8, Tensor(), true);
        double worst_ratio = 0, total_error = 0;
        for (int64_t m = 0; m < rows; ++m) {
          float top = 0;
          for (int64_t i = 0; i < in; ++i) top = std::max(top, std::fabs(x.data()[m * in + i]));
          const float sx = top / 127.f;
          for (int64_t o = 0; o < out; ++o) {
            double abs_w = 0, magnitude = 0;
            for (int64_t i = 0; i < in; ++i) {
              abs_w += std::fabs(dequantized.data()[o * in + i]);
              magnitude += std::fabs(dequantized.data()[o * in + i] * x.data()[m * in + i]);
            }
            const double bound = abs_w * sx / 2 + 1e-5 * (magnitude + 1);
            const double error = std::fabs(y8.data()[m * out + o] - y32.data()[m * out + o]);
            INFO("in " << in << " out " << out << " rows " << rows << " at " << m << "," << o);
            REQUIRE(error <= bound);
            worst_ratio = std::max(worst_ratio, error / bound);
            total_error += error;
            CHECK(acc.data()[m * out + o] ==
                  Approx(0.5f + y8.data()[m * out + o] - bias.data()[o]).margin(1e-4));
          }
        }
        CHECK(total_error > 0);  // the int8 path really ran: it rounds activations
        // and its integer sums are exact (no 16-bit saturation, whatever the CPU)
        const QuantizedRows qx = quantize_rows(x), qw = quantize_rows(dequantized, int8_weight_levels());
        for (int64_t m = 0; m < rows; ++m)
          for (int64_t o = 0; o < out; ++o) {
            int64_t exact = 0;
            for (int64_t i = 0; i < in; ++i) exact += int64_t(qx.values[m * in + i]) * qw.values[o * in + i];
            const double got = (y8.data()[m * out + o] - bias.data()[o]) / (double(qx.scales[m]) * int8.scales.data()[o]);
            REQUIRE(got == Approx(double(exact)).margin(2e-6 * std::fabs(double(exact)) + 0.5));
          }
      }
    }
  }
}

TEST_CASE("int8 linear: the bias is checked as fp32's is, and a strided one is read as it views", "[int8]") {
  Rng rng(5);
  Tensor w = Tensor::empty({8, 16}), x = Tensor::empty({3, 16});
  rng.fill_normal(w, 0.f, 0.1f);
  rng.fill_normal(x, 0.f, 1.f);
  const PackedWeight int8 = pack_weight_int8(w);
  Tensor y = Tensor::empty({3, 8});
  CHECK_THROWS_AS(linear_into(y, x, int8, Tensor::zeros({4}), false), Error);  // 4 values for 8 rows
  CHECK_THROWS_AS(linear_into(y, x, pack_weight(w), Tensor::zeros({4}), false), Error);
  // every other value of 16 (a column of [8, 2]): a strided view, whose contiguous copy must live
  // through the product
  Tensor wide = Tensor::empty({8, 2});
  rng.fill_normal(wide, 0.f, 1.f);
  const Tensor strided = wide.transpose(0, 1).slice(0, 1);
  REQUIRE_FALSE(strided.is_contiguous());
  linear_into(y, x, int8, strided, false);
  const Tensor plain = linear(x, int8, strided.contiguous().reshape({8}));
  for (int64_t i = 0; i < y.numel(); ++i) CHECK(y.data()[i] == plain.data()[i]);
}
