// Content addressing of the NTM through the attention core: attention::coefficients of a
// CosineScore (β · cos(k, M_i), softmax over the rows) against its formula and against the
// α that attend() sums with, its finite-difference gradients, a whole head's addressing chain
// (content → interpolation → shift → sharpening → read), and the degenerate inputs: a zero key
// and an all-zero memory row give finite values and gradients.
#include <cmath>

#include "../tensor/check_helpers.hpp"
#include "nn/attention.hpp"
#include "tensor/memory_ops.hpp"
#include "tensor/ops.hpp"

using namespace heed;
using heed::test::check_gradients;
using heed::test::random_tensor;

namespace {
Var content(const std::vector<Var>& v) {
  return attention::coefficients(attention::CosineScore{v[0], v[1], softplus(v[2])}, attention::DenseKeys{});
}

bool all_finite(const Tensor& t) {
  for (float v : t.to_vector())
    if (!std::isfinite(v)) return false;
  return true;
}
}  // namespace

TEST_CASE("content weights: softmax of β · cosine over memory rows, as attend() uses them") {
  const int64_t B = 2, N = 5, W = 3;
  const std::vector<Tensor> inputs = {random_tensor({B, W}, 1), random_tensor({B, N, W}, 2),
                                      random_tensor({B}, 3, -1, 2)};
  std::vector<Var> vars(inputs.begin(), inputs.end());
  const Tensor w = content(vars).value();
  for (int64_t b = 0; b < B; ++b) {
    const double beta = std::log1p(std::exp(double(inputs[2].data()[b])));
    std::vector<double> e(N);
    double total = 0;
    for (int64_t i = 0; i < N; ++i) {
      double km = 0, kk = 0, mm = 0;
      for (int64_t j = 0; j < W; ++j) {
        const double k = inputs[0].data()[b * W + j], m = inputs[1].data()[(b * N + i) * W + j];
        km += k * m;
        kk += k * k;
        mm += m * m;
      }
      total += e[i] = std::exp(beta * km / std::sqrt(kk * mm));
    }
    for (int64_t i = 0; i < N; ++i) CHECK(w.data()[b * N + i] == Approx(e[i] / total).margin(1e-6));
  }
  // attend() with the identity as values returns the coefficients themselves.
  Tensor identity = Tensor::zeros({B, N, N});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < N; ++i) identity.data()[(b * N + i) * N + i] = 1.f;
  const Tensor summed = attention::attend(attention::CosineScore{vars[0], vars[1], softplus(vars[2])},
                                          attention::DenseKeys{}, Var(identity))
                            .value();
  for (int64_t k = 0; k < B * N; ++k) CHECK(summed.data()[k] == Approx(w.data()[k]).margin(1e-6));
}

TEST_CASE("gradcheck content weights with β = softplus, odd sizes, one row") {
  check_gradients("content [2, 5, 3]", content,
                  {random_tensor({2, 3}, 1), random_tensor({2, 5, 3}, 2), random_tensor({2}, 3)});
  check_gradients("content [1, 1, 4]", content,
                  {random_tensor({1, 4}, 4), random_tensor({1, 1, 4}, 5), random_tensor({1}, 6)});
}

TEST_CASE("gradcheck a whole head: content, interpolation, shift, sharpening, then a read") {
  // inputs: key, memory, β̂, previous weights, ĝ, ŝ, γ̂
  auto head = [](const std::vector<Var>& v) {
    Var wc = content({v[0], v[1], v[2]});
    Var wg = add(v[3], mul(sub(wc, v[3]), sigmoid(v[4])));
    Var ws = circular_shift(wg, softmax(v[5]));
    Var w = sharpen(ws, add(softplus(v[6]), Var(Tensor::full({1}, 1.f))));
    return attention_context(w, v[1]);
  };
  Tensor previous = random_tensor({2, 7}, 4, 0.2f, 1.f);
  check_gradients("head", head,
                  {random_tensor({2, 3}, 1), random_tensor({2, 7, 3}, 2), random_tensor({2}, 3), previous,
                   random_tensor({2, 1}, 5), random_tensor({2, 3}, 6), random_tensor({2, 1}, 7)});
}

TEST_CASE("a zero key and an all-zero memory row give finite weights and gradients") {
  Tensor key = random_tensor({2, 3}, 1), memory = random_tensor({2, 4, 3}, 2);
  for (int j = 0; j < 3; ++j) key.data()[j] = 0.f;                   // sentence 0: zero key
  for (int j = 0; j < 3; ++j) memory.data()[(4 + 2) * 3 + j] = 0.f;  // sentence 1: row 2 all zero
  Var k(key, true), m(memory, true), beta(Tensor::full({2}, 2.f), true);
  Var w = content({k, m, beta});
  Var read = attention_context(sharpen(w, Var(Tensor::full({2, 1}, 2.f))), m);
  backward(sum(mul(read, Var(random_tensor({2, 3}, 3)))));
  CHECK(all_finite(w.value()));
  CHECK(all_finite(read.value()));
  CHECK(all_finite(k.grad()));
  CHECK(all_finite(m.grad()));
  CHECK(all_finite(beta.grad()));
  // A zero key is equally (dis)similar to every row: uniform weights.
  for (int i = 0; i < 4; ++i) CHECK(w.value().data()[i] == Approx(0.25f).margin(1e-6));
  // A zero row has cosine 0 with any key: exp(0) against the other rows' exp(β cos).
  double total = 0;
  for (int i = 0; i < 4; ++i) total += w.value().data()[4 + i];
  CHECK(total == Approx(1.0));
  CHECK(w.value().data()[4 + 2] > 0.f);
  // Its weight exactly, in double from the same inputs, as coefficients(CosineScore) computes it:
  // cos_i = k · m_i / ((‖k‖ + ε)(‖m_i‖ + ε)) with l2_normalize's ε = 1e-8, β = softplus(2) (content()
  // applies it), softmax of β cos_i over the rows. The zero row's cosine is 0, so its weight is
  // exp(0) / (exp(0) + Σ_{i≠2} exp(β cos_i)).
  const double eps = 1e-8, strength = std::log1p(std::exp(double(beta.value().data()[1])));
  double key_norm = 0;
  for (int j = 0; j < 3; ++j) key_norm += double(key.data()[3 + j]) * key.data()[3 + j];
  key_norm = std::sqrt(key_norm);
  double others = 0;
  for (int i = 0; i < 4; ++i) {
    if (i == 2) continue;
    double km = 0, mm = 0;
    for (int j = 0; j < 3; ++j) {
      const double k_j = key.data()[3 + j], m_j = memory.data()[(4 + i) * 3 + j];
      km += k_j * m_j;
      mm += m_j * m_j;
    }
    others += std::exp(strength * km / ((key_norm + eps) * (std::sqrt(mm) + eps)));
  }
  CHECK(w.value().data()[4 + 2] == Approx(1.0 / (1.0 + others)).margin(1e-6));
}
