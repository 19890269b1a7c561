// The decoders' fused attention steps are nn/attention's mechanism too: each equals the generic
// path of its score over the same keys (beam rows reading their sentence's encoder rows, padding
// masked), values and coefficients.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "models/additive_attention_step.hpp"
#include "models/cached_attention.hpp"
#include "models/seq2seq.hpp"
#include "nn/attention.hpp"
#include "tensor/ops.hpp"

using namespace heed;

namespace {

Tensor normal_tensor(const Shape& shape, std::mt19937& gen) {
  std::normal_distribution<float> normal(0.f, 1.f);
  Tensor t = Tensor::empty(shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = normal(gen);
  return t;
}

void require_close(const Tensor& a, const Tensor& b, double tolerance) {
  REQUIRE(a.numel() == b.numel());
  double worst = 0;
  for (int64_t k = 0; k < a.numel(); ++k) worst = std::max(worst, double(std::fabs(a.data()[k] - b.data()[k])));
  INFO("max |difference| " << worst);
  CHECK(worst <= tolerance);
}

attention::Options generic_with(Tensor* weights) {
  attention::Options o;
  o.generic = true;
  o.weights = weights;
  return o;
}

}  // namespace

TEST_CASE("additive_attention_step (beam search) = the generic additive attention", "[attention]") {
  std::mt19937 gen(3);
  const int64_t B = 3, S = 6, A = 10, Dv = 12;
  const Tensor keys = normal_tensor({B, S, A}, gen), values = normal_tensor({B, S, Dv}, gen),
               v = normal_tensor({A}, gen), pad = Tensor::zeros({B, S});
  pad.data()[0 * S + 5] = pad.data()[2 * S + 4] = pad.data()[2 * S + 5] = 1.f;
  const std::vector<int32_t> source_row = {0, 0, 2, 1, 1, 1, 2};
  const int64_t N = static_cast<int64_t>(source_row.size());
  const Tensor query = normal_tensor({N, A}, gen);
  Tensor alpha, context = Tensor::zeros({N, Dv});
  additive_attention_step(query, keys, v, values, pad, source_row, alpha, context);

  NoGradGuard no_grad;
  Tensor weights;
  const Var generic =
      attention::attend(attention::AdditiveScore{Var(query), Var(gather_rows(keys, source_row)), Var(v)},
                        attention::DenseKeys{gather_rows(pad, source_row), {}}, Var(gather_rows(values, source_row)),
                        generic_with(&weights));
  require_close(context, generic.value(), 1e-5);
  require_close(alpha, weights, 1e-6);
}

TEST_CASE("cached_attention (incremental Transformer decoding) = the generic dot-product attention", "[attention]") {
  std::mt19937 gen(4);
  const int64_t N = 4, h = 3, dh = 8, len = 7, width = h * dh;
  // One buffer per position, rows n at row n (the layout a decoding step writes).
  std::vector<Tensor> key_rows, value_rows;
  std::vector<const float*> keys, values;
  for (int64_t j = 0; j < len; ++j) {
    key_rows.push_back(normal_tensor({N, width}, gen));
    value_rows.push_back(normal_tensor({N, width}, gen));
    keys.push_back(key_rows.back().data());
    values.push_back(value_rows.back().data());
  }
  std::vector<int32_t> rows(N * len);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t j = 0; j < len; ++j) rows[n * len + j] = static_cast<int32_t>(n);
  Tensor pad = Tensor::zeros({N, len});
  pad.data()[1 * len + 6] = pad.data()[3 * len + 2] = 1.f;
  const Tensor q = normal_tensor({N, width}, gen);
  Tensor out = Tensor::empty({N, width}), mean = Tensor::empty({N, len});
  cached_attention(q.data(), width, N, h, dh, AttentionMemory{keys.data(), values.data(), rows.data(), width, len},
                   pad.data(), out.data(), mean.data());

  // The same as [N·h, T = 1, d_h] queries over [N·h, len, d_h] keys and values.
  Tensor gq = Tensor::empty({N * h, 1, dh}), gk = Tensor::empty({N * h, len, dh}), gv = Tensor::empty({N * h, len, dh});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < h; ++k)
      for (int64_t i = 0; i < dh; ++i) {
        gq.data()[(n * h + k) * dh + i] = q.data()[n * width + k * dh + i];
        for (int64_t j = 0; j < len; ++j) {
          gk.data()[((n * h + k) * len + j) * dh + i] = key_rows[j].data()[n * width + k * dh + i];
          gv.data()[((n * h + k) * len + j) * dh + i] = value_rows[j].data()[n * width + k * dh + i];
        }
      }
  NoGradGuard no_grad;
  Tensor weights;
  const Tensor generic = attention::attend(attention::DotProductScore{Var(gq), Var(gk)},
                                           attention::DenseKeys{pad.reshape({N, 1, 1, len}), {N, h, 1, len}}, Var(gv),
                                           generic_with(&weights))
                             .value();  // [N·h, 1, d_h]: heads side by side per row, as `out`
  require_close(out, generic, 1e-5);
  Tensor generic_mean = Tensor::zeros({N, len});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < h; ++k)
      for (int64_t j = 0; j < len; ++j) generic_mean.data()[n * len + j] += weights.data()[(n * h + k) * len + j] / h;
  require_close(mean, generic_mean, 1e-6);
}
