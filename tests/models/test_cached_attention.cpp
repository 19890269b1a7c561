// cached_attention against a plain double-precision evaluation of its formula: keys and values
// scattered over several position buffers and rows, a row stride wider than the heads, pads,
// head averages, several head widths and lengths.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "models/cached_attention.hpp"

using namespace heed;

namespace {

struct Case {
  int64_t N, heads, dh, len, rows_per_position;
};

void check(const Case& c, std::mt19937& gen) {
  std::normal_distribution<float> normal(0.f, 1.f);
  const int64_t width = c.heads * c.dh, stride = width + 3;  // rows padded: the stride is honoured
  std::vector<std::vector<float>> key_buffers(c.len), value_buffers(c.len);
  std::vector<const float*> keys(c.len), values(c.len);
  for (int64_t j = 0; j < c.len; ++j) {
    key_buffers[j].resize(c.rows_per_position * stride);
    value_buffers[j].resize(c.rows_per_position * stride);
    for (auto& x : key_buffers[j]) x = 2 * normal(gen);
    for (auto& x : value_buffers[j]) x = normal(gen);
    keys[j] = key_buffers[j].data();
    values[j] = value_buffers[j].data();
  }
  std::uniform_int_distribution<int32_t> row(0, static_cast<int32_t>(c.rows_per_position - 1));
  std::vector<int32_t> rows(c.N * c.len);
  for (auto& r : rows) r = row(gen);
  std::vector<float> q(c.N * (width + 5)), pad(c.N * c.len, 0.f);
  for (auto& x : q) x = normal(gen);
  for (int64_t n = 0; n < c.N; ++n)  // a few pads per row, never all positions
    for (int64_t j = 1; j < c.len; j += 3) pad[n * c.len + j] = (n + j) % 2 ? 1.f : 0.f;
  std::vector<float> out(c.N * width), mean(c.N * c.len);
  cached_attention(q.data(), width + 5, c.N, c.heads, c.dh,
                   AttentionMemory{keys.data(), values.data(), rows.data(), stride, c.len}, pad.data(), out.data(),
                   mean.data());

  for (int64_t n = 0; n < c.N; ++n) {
    std::vector<double> mean_expected(c.len, 0.0);
    for (int64_t k = 0; k < c.heads; ++k) {
      std::vector<double> s(c.len);
      double top = -INFINITY, total = 0;
      for (int64_t j = 0; j < c.len; ++j) {
        const float* key = keys[j] + rows[n * c.len + j] * stride + k * c.dh;
        double dot = 0;
        for (int64_t i = 0; i < c.dh; ++i) dot += double(q[n * (width + 5) + k * c.dh + i]) * key[i];
        s[j] = dot / std::sqrt(double(c.dh));
        if (pad[n * c.len + j] == 0.f) top = std::max(top, s[j]);
      }
      for (int64_t j = 0; j < c.len; ++j) total += s[j] = pad[n * c.len + j] != 0.f ? 0.0 : std::exp(s[j] - top);
      for (int64_t i = 0; i < c.dh; ++i) {
        double o = 0;
        for (int64_t j = 0; j < c.len; ++j) o += s[j] / total * values[j][rows[n * c.len + j] * stride + k * c.dh + i];
        REQUIRE(out[n * width + k * c.dh + i] == Approx(o).margin(1e-5));
      }
      for (int64_t j = 0; j < c.len; ++j) mean_expected[j] += s[j] / total / c.heads;
    }
    for (int64_t j = 0; j < c.len; ++j) {
      REQUIRE(mean[n * c.len + j] == Approx(mean_expected[j]).margin(1e-6));
      if (pad[n * c.len + j] != 0.f) REQUIRE(mean[n * c.len + j] == 0.f);
    }
  }
}

}  // namespace

TEST_CASE("cached attention equals its formula over scattered keys and values", "[attention]") {
  std::mt19937 gen(5);
  for (int64_t dh : {4, 16, 24, 64})
    for (int64_t len : {1, 7, 16, 17, 40}) {
      INFO("head width " << dh << ", " << len << " positions");
      check({5, 3, dh, len, 4}, gen);
    }
}

TEST_CASE("cached attention rejects a memory it cannot read", "[attention]") {
  std::vector<float> q(8), out(8);
  std::vector<const float*> keys(1, q.data());
  std::vector<int32_t> rows(1, 0);
  REQUIRE_THROWS(cached_attention(q.data(), 8, 1, 2, 4, AttentionMemory{keys.data(), keys.data(), rows.data(), 4, 1},
                                  nullptr, out.data(), nullptr));
  REQUIRE_THROWS(cached_attention(q.data(), 8, 1, 2, 4, AttentionMemory{keys.data(), keys.data(), rows.data(), 8, 0},
                                  nullptr, out.data(), nullptr));
}
