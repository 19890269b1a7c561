// The NTM's memory ops (tensor/memory_ops.hpp): finite-difference gradient checks on odd shapes
// (one row, one memory row, more shifts than rows), forward values against their formulas, and
// the degenerate inputs the model meets (weights at 0, a zero memory row).
#include "check_helpers.hpp"
#include "tensor/memory_ops.hpp"

using namespace heed;
using heed::test::check_gradients;
using heed::test::random_tensor;

namespace {
// Positive rows summing to 1, like the weights of a head.
Tensor distribution(const Shape& shape, uint64_t seed) {
  Tensor t = random_tensor(shape, seed, 0.05f, 1.f);
  const int64_t n = shape.back();
  for (int64_t r = 0; r < t.numel() / n; ++r) {
    float total = 0;
    for (int64_t i = 0; i < n; ++i) total += t.data()[r * n + i];
    for (int64_t i = 0; i < n; ++i) t.data()[r * n + i] /= total;
  }
  return t;
}

bool all_finite(const Tensor& t) {
  for (float v : t.to_vector())
    if (!std::isfinite(v)) return false;
  return true;
}
}  // namespace

TEST_CASE("gradcheck softplus over both signs") {
  check_gradients("softplus", [](const std::vector<Var>& v) { return softplus(v[0]); },
                  {random_tensor({3, 7}, 1, -4, 4)});
  Var big(Tensor::from_vector({3}, {-100.f, 0.f, 100.f}));
  const std::vector<float> y = softplus(big).value().to_vector();
  CHECK(y[0] == Approx(0.f).margin(1e-30));
  CHECK(y[1] == Approx(std::log(2.f)));
  CHECK(y[2] == Approx(100.f));  // no overflow of exp(100)
}

TEST_CASE("gradcheck circular shift: 3 and 5 shifts over 7 rows, 5 shifts over 3 rows (wrapping), one row") {
  auto f = [](const std::vector<Var>& v) { return circular_shift(v[0], v[1]); };
  check_gradients("shift K=3 N=7", f, {distribution({2, 7}, 1), distribution({2, 3}, 2)});
  check_gradients("shift K=5 N=7", f, {distribution({3, 7}, 3), distribution({3, 5}, 4)});
  check_gradients("shift K=5 N=3", f, {distribution({2, 3}, 5), distribution({2, 5}, 6)});
  check_gradients("shift K=3 N=1", f, {distribution({1, 1}, 7), distribution({1, 3}, 8)});
}

TEST_CASE("circular shift by one rotates the weights, and the paper's formula holds") {
  // Shift +1 (the last of three): row i takes the weight of row i − 1, row 0 that of row N − 1.
  Var w(Tensor::from_vector({1, 5}, {0.1f, 0.2f, 0.3f, 0.4f, 0.0f}));
  Var plus_one(Tensor::from_vector({1, 3}, {0.f, 0.f, 1.f}));
  CHECK(circular_shift(w, plus_one).value().to_vector() == std::vector<float>{0.0f, 0.1f, 0.2f, 0.3f, 0.4f});
  Var minus_one(Tensor::from_vector({1, 3}, {1.f, 0.f, 0.f}));
  CHECK(circular_shift(w, minus_one).value().to_vector() == std::vector<float>{0.2f, 0.3f, 0.4f, 0.0f, 0.1f});
  // A mixed shift over 3 rows with 5 shifts: out_i = Σ_k s_k w_{(i − (k − 2)) mod 3}.
  const Tensor wv = distribution({1, 3}, 9), sv = distribution({1, 5}, 10);
  const std::vector<float> out = circular_shift(Var(wv), Var(sv)).value().to_vector();
  for (int i = 0; i < 3; ++i) {
    double expected = 0;
    for (int k = 0; k < 5; ++k) expected += sv.data()[k] * wv.data()[(((i - (k - 2)) % 3) + 3) % 3];
    CHECK(out[i] == Approx(expected).margin(1e-6));
  }
}

TEST_CASE("gradcheck sharpening, and its values: w^γ / Σ w^γ, the identity at γ = 1") {
  auto f = [](const std::vector<Var>& v) { return sharpen(v[0], v[1]); };
  // Weights ≥ 0.3 (any scale: sharpening normalises), so that w ± h stays positive.
  check_gradients("sharpen [2, 7]", f, {random_tensor({2, 7}, 1, 0.3f, 1.f), random_tensor({2, 1}, 2, 1.f, 3.f)});
  check_gradients("sharpen [3, 1]", f, {random_tensor({3, 1}, 3, 0.3f, 1.f), random_tensor({3, 1}, 4, 1.f, 3.f)});
  const Tensor wv = distribution({1, 5}, 5);
  const std::vector<float> same = sharpen(Var(wv), Var(Tensor::full({1, 1}, 1.f))).value().to_vector();
  const std::vector<float> sharp = sharpen(Var(wv), Var(Tensor::full({1, 1}, 2.5f))).value().to_vector();
  double total = 0;
  for (int i = 0; i < 5; ++i) total += std::pow(wv.data()[i], 2.5);
  for (int i = 0; i < 5; ++i) {
    CHECK(same[i] == Approx(wv.data()[i]).margin(1e-6));
    CHECK(sharp[i] == Approx(std::pow(wv.data()[i], 2.5) / total).margin(1e-6));
  }
}

TEST_CASE("sharpening stays finite for zero weights and a large gamma") {
  // A one-hot row at γ = 60, and an all-zero row: ε keeps its logs finite and makes it uniform.
  Var w(Tensor::from_vector({2, 4}, {0.f, 0.f, 1.f, 0.f, 0.f, 0.f, 0.f, 0.f}), true);
  Var gamma(Tensor::from_vector({2, 1}, {60.f, 3.f}), true);
  Var y = sharpen(w, gamma);
  backward(sum(mul(y, Var(random_tensor({2, 4}, 1)))));
  CHECK(all_finite(y.value()));
  CHECK(all_finite(w.grad()));
  CHECK(all_finite(gamma.grad()));
  CHECK(y.value().to_vector()[2] == Approx(1.f));
  for (int i = 4; i < 8; ++i) CHECK(y.value().data()[i] == Approx(0.25f));
}

TEST_CASE("gradcheck the write: erase then add, one head, odd memory sizes") {
  auto f = [](const std::vector<Var>& v) { return memory_write(v[0], v[1], v[2], v[3]); };
  check_gradients(
      "write [2, 5, 3]", f,
      {random_tensor({2, 5, 3}, 1), distribution({2, 5}, 2), random_tensor({2, 3}, 3, 0, 1), random_tensor({2, 3}, 4)});
  check_gradients(
      "write [1, 1, 7]", f,
      {random_tensor({1, 1, 7}, 5), distribution({1, 1}, 6), random_tensor({1, 7}, 7, 0, 1), random_tensor({1, 7}, 8)});
  // Values: M_ij (1 − w_i e_j) + w_i a_j; a full erase at weight 1 replaces the row by a.
  const Tensor m = random_tensor({1, 3, 2}, 9), e = random_tensor({1, 2}, 10, 0, 1), a = random_tensor({1, 2}, 11);
  const Tensor w = Tensor::from_vector({1, 3}, {0.2f, 0.f, 0.8f});
  const std::vector<float> out = memory_write(Var(m), Var(w), Var(e), Var(a)).value().to_vector();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j)
      CHECK(out[i * 2 + j] ==
            Approx(m.data()[i * 2 + j] * (1 - w.data()[i] * e.data()[j]) + w.data()[i] * a.data()[j]));
  const std::vector<float> replaced =
      memory_write(Var(m), Var(Tensor::from_vector({1, 3}, {0, 1, 0})), Var(Tensor::full({1, 2}, 1.f)), Var(a))
          .value()
          .to_vector();
  CHECK(replaced[2] == a.data()[0]);
  CHECK(replaced[3] == a.data()[1]);
  CHECK(replaced[0] == m.data()[0]);
}

TEST_CASE("gradcheck the read: Σ_i w_i M_i (attention_context), one memory row too") {
  auto f = [](const std::vector<Var>& v) { return attention_context(v[0], v[1]); };
  check_gradients("read [2, 5, 3]", f, {distribution({2, 5}, 1), random_tensor({2, 5, 3}, 2)});
  check_gradients("read [3, 1, 4]", f, {distribution({3, 1}, 3), random_tensor({3, 1, 4}, 4)});
}

TEST_CASE("gradcheck interpolation g w^c + (1 − g) w_prev as the model composes it") {
  auto f = [](const std::vector<Var>& v) { return add(v[1], mul(sub(v[0], v[1]), sigmoid(v[2]))); };
  check_gradients("interpolate", f,
                  {distribution({3, 7}, 1), distribution({3, 7}, 2), random_tensor({3, 1}, 3, -3, 3)});
}

TEST_CASE("select_rows takes whole rows from one side, and routes gradients back the same way") {
  auto f = [](const std::vector<Var>& v) { return select_rows({1, 0, 1}, v[0], v[1]); };
  check_gradients("select [3, 2, 5]", f, {random_tensor({3, 2, 5}, 1), random_tensor({3, 2, 5}, 2)});
  const Tensor n = random_tensor({3, 4}, 3), p = random_tensor({3, 4}, 4);
  const std::vector<float> out = select_rows({0, 1, 0}, Var(n), Var(p)).value().to_vector();
  for (int j = 0; j < 4; ++j) {
    CHECK(out[j] == p.data()[j]);
    CHECK(out[4 + j] == n.data()[4 + j]);
    CHECK(out[8 + j] == p.data()[8 + j]);
  }
}
