// additive_attention_step against a plain double-precision evaluation of its formula, with beam
// rows sharing encoder rows in groups of every size (the context sum runs up to four rows of one
// sentence together), padded positions, and a value width that is not a multiple of the column
// block. Rows decoded together equal the same rows decoded one at a time, bit for bit.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "models/additive_attention_step.hpp"

using namespace heed;

namespace {

constexpr int64_t B = 3, S = 7, A = 24, Dv = 70;

Tensor random_tensor(const Shape& shape, std::mt19937& gen, float scale) {
  std::normal_distribution<float> normal(0.f, scale);
  Tensor t = Tensor::empty(shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = normal(gen);
  return t;
}

Tensor rows_of(const Tensor& t, const std::vector<int64_t>& rows) {
  const int64_t width = t.dim(1);
  Tensor out = Tensor::empty({static_cast<int64_t>(rows.size()), width});
  for (size_t r = 0; r < rows.size(); ++r)
    for (int64_t i = 0; i < width; ++i) out.data()[r * width + i] = t.data()[rows[r] * width + i];
  return out;
}

}  // namespace

TEST_CASE("additive attention step: the formula in double precision, and grouped rows equal single rows",
          "[attention]") {
  std::mt19937 gen(11);
  const Tensor keys = random_tensor({B, S, A}, gen, 1.f), v = random_tensor({A}, gen, 0.5f),
               values = random_tensor({B, S, Dv}, gen, 1.f), pad = Tensor::zeros({B, S});
  for (int64_t j = S - 3; j < S; ++j) pad.data()[1 * S + j] = 1.f;  // sentence 1: 4 real positions
  pad.data()[2 * S + S - 1] = 1.f;                                  // sentence 2: 6
  // Groups: five rows of sentence 0 (4 + 1), two of 1, one of 0, three of 2.
  const std::vector<int32_t> source_row = {0, 0, 0, 0, 0, 1, 1, 0, 2, 2, 2};
  const int64_t N = static_cast<int64_t>(source_row.size());
  const Tensor query = random_tensor({N, A}, gen, 1.f), start = random_tensor({N, Dv}, gen, 1.f);

  Tensor alpha, context = start.clone();
  additive_attention_step(query, keys, v, values, pad, source_row, alpha, context);
  REQUIRE(alpha.shape() == Shape{N, S});

  double worst_alpha = 0, worst_context = 0;
  for (int64_t n = 0; n < N; ++n) {
    const int64_t b = source_row[n];
    std::vector<double> e(S, 0.0);
    double top = -1e300, total = 0;
    for (int64_t j = 0; j < S; ++j) {
      if (pad.data()[b * S + j] != 0.f) continue;
      for (int64_t a = 0; a < A; ++a)
        e[j] += v.data()[a] * std::tanh(double(query.data()[n * A + a]) + keys.data()[(b * S + j) * A + a]);
      top = std::max(top, e[j]);
    }
    for (int64_t j = 0; j < S; ++j) {
      e[j] = pad.data()[b * S + j] != 0.f ? 0.0 : std::exp(e[j] - top);
      total += e[j];
    }
    for (int64_t j = 0; j < S; ++j) {
      const double w = e[j] / total;
      if (pad.data()[b * S + j] != 0.f) CHECK(alpha.data()[n * S + j] == 0.f);
      worst_alpha = std::max(worst_alpha, std::fabs(w - alpha.data()[n * S + j]));
    }
    for (int64_t i = 0; i < Dv; ++i) {
      double c = start.data()[n * Dv + i];
      for (int64_t j = 0; j < S; ++j) c += e[j] / total * values.data()[(b * S + j) * Dv + i];
      worst_context = std::max(worst_context, std::fabs(c - context.data()[n * Dv + i]));
    }
  }
  INFO("max |step − double|: alpha " << worst_alpha << ", context " << worst_context);
  CHECK(worst_alpha <= 1e-6);
  CHECK(worst_context <= 1e-5);

  for (int64_t n = 0; n < N; ++n) {
    Tensor one_alpha, one_context = rows_of(start, {n});
    additive_attention_step(rows_of(query, {n}), keys, v, values, pad, {source_row[n]}, one_alpha, one_context);
    INFO("row " << n);
    for (int64_t j = 0; j < S; ++j) CHECK(one_alpha.data()[j] == alpha.data()[n * S + j]);
    for (int64_t i = 0; i < Dv; ++i) CHECK(one_context.data()[i] == context.data()[n * Dv + i]);
  }
}
