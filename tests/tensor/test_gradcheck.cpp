// Finite-difference gradient check of every op and of two compositions (a 2-layer MLP, an
// attention block) on odd shapes: sizes 1, primes, non-square. Method, step and tolerance are
// stated and justified in check_helpers.hpp.
#include "check_helpers.hpp"

using namespace heed;
using heed::test::check_gradients;
using heed::test::random_tensor;

namespace {
Tensor away_from_zero(const Shape& shape, uint64_t seed) {
  // For relu: |x| ≥ 0.1 keeps x ± h on one side of the kink.
  Tensor t = random_tensor(shape, seed, 0.1f, 1.f);
  for (int64_t i = 0; i < t.numel(); i += 2) t.data()[i] = -t.data()[i];
  return t;
}
}  // namespace

TEST_CASE("gradcheck matmul: 2-D, batched, shared-B and batch-1 B, every transpose combination") {
  const int64_t M = 3, K = 5, N = 7, B = 2;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      const std::string tag = std::string(" ta=") + char('0' + ta) + " tb=" + char('0' + tb);
      Shape a2 = ta ? Shape{K, M} : Shape{M, K}, b2 = tb ? Shape{N, K} : Shape{K, N};
      auto f = [&](const std::vector<Var>& v) { return matmul(v[0], v[1], ta, tb); };
      check_gradients("matmul 2-D" + tag, f, {random_tensor(a2, 1), random_tensor(b2, 2)});
      check_gradients("matmul 2-D M=1" + tag, f,
                      {random_tensor(ta ? Shape{K, 1} : Shape{1, K}, 3), random_tensor(b2, 4)});
      Shape a3 = {B, a2[0], a2[1]}, b3 = {B, b2[0], b2[1]};
      check_gradients("matmul batched" + tag, f, {random_tensor(a3, 5), random_tensor(b3, 6)});
      check_gradients("matmul shared B" + tag, f, {random_tensor(a3, 7), random_tensor(b2, 8)});
      // a batch of one B beside a batch of A: shared too (its batched gradient once failed)
      check_gradients("matmul batch-1 B" + tag, f, {random_tensor(a3, 9), random_tensor({1, b2[0], b2[1]}, 10)});
    }
}

TEST_CASE("gradcheck linear with and without bias, 2-D and 3-D input") {
  auto with_bias = [](const std::vector<Var>& v) { return linear(v[0], v[1], v[2]); };
  auto no_bias = [](const std::vector<Var>& v) { return linear(v[0], v[1], Var()); };
  check_gradients("linear 3-D + bias", with_bias,
                  {random_tensor({2, 3, 5}, 1), random_tensor({7, 5}, 2), random_tensor({7}, 3)});
  check_gradients("linear 2-D no bias", no_bias, {random_tensor({1, 5}, 4), random_tensor({3, 5}, 5)});
}

TEST_CASE("gradcheck elementwise binary ops with broadcasting and self-aliasing") {
  using Bin = Var (*)(const Var&, const Var&);
  const std::pair<const char*, Bin> ops[] = {{"add", add}, {"sub", sub}, {"mul", mul}};
  for (auto [name, op] : ops) {
    auto f = [op](const std::vector<Var>& v) { return op(v[0], v[1]); };
    const std::string n = name;
    check_gradients(n + " same shape", f, {random_tensor({3, 5}, 1), random_tensor({3, 5}, 2)});
    check_gradients(n + " broadcast last axis", f, {random_tensor({2, 3, 5}, 3), random_tensor({5}, 4)});
    check_gradients(n + " broadcast [3,1]", f, {random_tensor({2, 3, 5}, 5), random_tensor({3, 1}, 6)});
    check_gradients(n + " broadcast [1,1]", f, {random_tensor({1, 7}, 7), random_tensor({1, 1}, 8)});
    // The same Var on both sides: the two gradient contributions must add, not alias.
    check_gradients(n + "(x, x)", [op](const std::vector<Var>& v) { return op(v[0], v[0]); },
                    {random_tensor({3, 5}, 9)});
  }
  check_gradients("scale", [](const std::vector<Var>& v) { return scale(v[0], -1.7f); }, {random_tensor({3, 5}, 10)});
}

TEST_CASE("gradcheck activations") {
  check_gradients("tanh", [](const std::vector<Var>& v) { return tanh(v[0]); }, {random_tensor({3, 7}, 1, -2, 2)});
  check_gradients("sigmoid", [](const std::vector<Var>& v) { return sigmoid(v[0]); },
                  {random_tensor({3, 7}, 2, -3, 3)});
  check_gradients("relu", [](const std::vector<Var>& v) { return relu(v[0]); }, {away_from_zero({3, 7}, 3)});
  check_gradients("gelu", [](const std::vector<Var>& v) { return gelu(v[0]); }, {random_tensor({3, 7}, 4, -3, 3)});
}

TEST_CASE("gradcheck softmax, log_softmax, layer_norm") {
  check_gradients("softmax [3,7]", [](const std::vector<Var>& v) { return softmax(v[0]); },
                  {random_tensor({3, 7}, 1, -2, 2)});
  check_gradients("softmax [2,3,1]", [](const std::vector<Var>& v) { return softmax(v[0]); },
                  {random_tensor({2, 3, 1}, 2)});
  check_gradients("log_softmax [2,3,5]", [](const std::vector<Var>& v) { return log_softmax(v[0]); },
                  {random_tensor({2, 3, 5}, 3, -2, 2)});
  check_gradients("layer_norm [3,7]", [](const std::vector<Var>& v) { return layer_norm(v[0], v[1], v[2]); },
                  {random_tensor({3, 7}, 4, -2, 2), random_tensor({7}, 5, 0.5f, 1.5f), random_tensor({7}, 6)});
  check_gradients("layer_norm [2,1,5]", [](const std::vector<Var>& v) { return layer_norm(v[0], v[1], v[2]); },
                  {random_tensor({2, 1, 5}, 7, -2, 2), random_tensor({5}, 8, 0.5f, 1.5f), random_tensor({5}, 9)});
}

TEST_CASE("gradcheck shape ops") {
  check_gradients("reshape",
                  [](const std::vector<Var>& v) {
                    return reshape(v[0], {5, -1});
                  },
                  {random_tensor({3, 5}, 1)});
  check_gradients("permute 2,0,1",
                  [](const std::vector<Var>& v) {
                    return permute(v[0], {2, 0, 1});
                  },
                  {random_tensor({2, 3, 5}, 2)});
  for (int axis : {0, 1, -1})
    check_gradients("concat axis " + std::to_string(axis),
                    [axis](const std::vector<Var>& v) {
                      Var b = axis == 0   ? reshape(v[1], {1, 3, 5})
                              : axis == 1 ? reshape(v[1], {2, 1, 5})
                                          : reshape(v[1], {2, 3, 1});
                      return concat({v[0], b, v[0]}, axis);
                    },
                    {random_tensor({2, 3, 5}, 3), random_tensor({axis == 0   ? 15
                                                                 : axis == 1 ? 10
                                                                             : 6},
                                                                4)});
  check_gradients("split axis 1 (weighted parts)",
                  [](const std::vector<Var>& v) {
                    auto parts = split(v[0], {1, 2, 4}, 1);
                    return concat({mul(parts[2], parts[2]), parts[0], scale(parts[1], 3.f)}, 1);
                  },
                  {random_tensor({3, 7}, 5)});
  check_gradients("slice_rows", [](const std::vector<Var>& v) { return slice_rows(v[0], 1, 3); },
                  {random_tensor({5, 3}, 6)});
}

TEST_CASE("gradcheck lookup, masking, dropout, reductions") {
  const std::vector<int32_t> ids = {2, 0, 2, 4, 2, 1};  // repeated rows scatter-add
  check_gradients("embedding",
                  [&](const std::vector<Var>& v) {
                    return embedding(v[0], ids, {2, 3});
                  },
                  {random_tensor({5, 3}, 1)});
  Tensor mask = Tensor::from_vector({3, 1, 5}, {0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1});
  check_gradients("masked_fill broadcast", [&](const std::vector<Var>& v) { return masked_fill(v[0], mask, -1e4f); },
                  {random_tensor({3, 2, 5}, 2)});
  check_gradients("dropout p=0.3",
                  [](const std::vector<Var>& v) {
                    Rng rng(42);  // same mask at every evaluation
                    return dropout(v[0], 0.3f, rng);
                  },
                  {random_tensor({3, 11}, 3)});
  check_gradients("relu_dropout p=0.3",
                  [](const std::vector<Var>& v) {
                    Rng rng(42);
                    return relu_dropout(v[0], 0.3f, rng);
                  },
                  {away_from_zero({3, 11}, 6)});
  check_gradients("sum", [](const std::vector<Var>& v) { return sum(v[0]); }, {random_tensor({3, 5}, 4)});
  check_gradients("mean", [](const std::vector<Var>& v) { return mean(v[0]); }, {random_tensor({2, 3, 5}, 5)});
}

TEST_CASE("gradcheck cross_entropy with label smoothing and ignored rows") {
  const std::vector<int32_t> targets = {3, -100, 0, 6, 3};
  for (float eps : {0.f, 0.1f})
    check_gradients("cross_entropy eps=" + std::to_string(eps),
                    [&](const std::vector<Var>& v) { return cross_entropy(v[0], targets, -100, eps, 4.f); },
                    {random_tensor({5, 7}, 1, -3, 3)});
  check_gradients("cross_entropy V=1",
                  [](const std::vector<Var>& v) {
                    return cross_entropy(v[0], {0, 0}, -1, 0.1f, 2.f);
                  },
                  {random_tensor({2, 1}, 2)});
}

TEST_CASE("gradcheck GRU cell and sequences (both directions, ragged lengths)") {
  const int64_t B = 3, H = 5, T = 4;
  auto cell = [](const std::vector<Var>& v) { return gru_cell(v[0], v[1], v[2], v[3]); };
  check_gradients("gru_cell", cell,
                  {random_tensor({B, 3 * H}, 1), random_tensor({B, H}, 2), random_tensor({3 * H, H}, 3),
                   random_tensor({3 * H}, 4)});
  // Lengths include the full length, 1 and 0 (an empty sentence).
  const std::vector<int32_t> lengths = {4, 1, 3, 0};
  for (bool reverse : {false, true})
    check_gradients(std::string("gru_sequence reverse=") + (reverse ? "1" : "0"),
                    [&](const std::vector<Var>& v) { return gru_sequence(v[0], v[1], v[2], lengths, reverse); },
                    {random_tensor({4, T, 3 * H}, 5), random_tensor({3 * H, H}, 6), random_tensor({3 * H}, 7)});
  for (bool reverse : {false, true})  // the input packed: [Σ lengths, 3H]
    check_gradients(
        std::string("gru_sequence packed reverse=") + (reverse ? "1" : "0"),
        [&](const std::vector<Var>& v) { return gru_sequence(v[0], v[1], v[2], lengths, reverse, nullptr, T); },
        {random_tensor({8, 3 * H}, 14), random_tensor({3 * H, H}, 15), random_tensor({3 * H}, 16)});
  // Eleven rows: beyond one block of rows, so that later steps multiply only a prefix of them.
  const std::vector<int32_t> many = {2, 4, 0, 1, 3, 4, 1, 2, 2, 3, 1};
  for (bool reverse : {false, true})
    check_gradients(std::string("gru_sequence B=11 reverse=") + (reverse ? "1" : "0"),
                    [&](const std::vector<Var>& v) { return gru_sequence(v[0], v[1], v[2], many, reverse); },
                    {random_tensor({11, T, 3 * H}, 11), random_tensor({3 * H, H}, 12), random_tensor({3 * H}, 13)});
  check_gradients("gru_sequence B=1 T=1",
                  [](const std::vector<Var>& v) { return gru_sequence(v[0], v[1], v[2], {1}, true); },
                  {random_tensor({1, 1, 3 * H}, 8), random_tensor({3 * H, H}, 9), random_tensor({3 * H}, 10)});
}

TEST_CASE("gradcheck a recurrence with gru_gates whose weight gradients are deferred to one matmul (StepWeight)") {
  const int64_t B = 2, I = 3, H = 4, T = 3;
  // v: inputs [T, B, I], h0 [B, H], w_in [3H, I], w_hh [3H, H], b_hh [3H]
  auto recurrence = [&](const std::vector<Var>& v, bool deferred) {
    const StepWeight w_in_grad(v[2]), w_hh_grad(v[3]);
    Var h = v[1];
    std::vector<Var> outputs;
    for (int64_t t = 0; t < T; ++t) {
      Var x = reshape(slice_rows(v[0], t, t + 1), {B, I});
      Var gi = deferred ? linear(x, v[2], Var(), w_in_grad) : linear(x, v[2], Var());
      h = deferred ? gru_gates(gi, linear(h, v[3], v[4], w_hh_grad), h) : gru_cell(gi, h, v[3], v[4]);
      outputs.push_back(h);
    }
    return concat(outputs, 0);
  };
  const std::vector<Tensor> inputs = {random_tensor({T, B, I}, 1), random_tensor({B, H}, 2),
                                      random_tensor({3 * H, I}, 3), random_tensor({3 * H, H}, 4),
                                      random_tensor({3 * H}, 5)};
  {  // gru_gates after our own projection == gru_cell, forward
    std::vector<Var> v;
    for (const auto& t : inputs) v.emplace_back(t);
    const auto fused = recurrence(v, true).value().to_vector(), plain = recurrence(v, false).value().to_vector();
    for (size_t k = 0; k < plain.size(); ++k) CHECK(fused[k] == Approx(plain[k]).margin(1e-6));
  }
  check_gradients(
      "recurrence, deferred weight gradients", [&](const std::vector<Var>& v) { return recurrence(v, true); }, inputs);

  // and the same gradients as the per-step matmuls, to float rounding
  auto grads = [&](bool deferred) {
    std::vector<Var> v;
    for (const auto& t : inputs) v.emplace_back(t.clone(), true);
    backward(sum(recurrence(v, deferred)));
    std::vector<std::vector<float>> out;
    for (const auto& x : v) out.push_back(x.grad().to_vector());
    return out;
  };
  const auto per_step = grads(false), once = grads(true);
  for (size_t i = 0; i < inputs.size(); ++i)
    for (size_t k = 0; k < per_step[i].size(); ++k) CHECK(once[i][k] == Approx(per_step[i][k]).margin(1e-5));

  Var other(random_tensor({3 * H, I}, 6), true);
  CHECK_THROWS_WITH(linear(Var(random_tensor({B, I}, 7)), other, Var(), StepWeight(Var(inputs[2], true))),
                    Catch::Contains("another weight"));
}

TEST_CASE("gradcheck additive attention scores") {
  check_gradients("additive_attention_scores",
                  [](const std::vector<Var>& v) { return additive_attention_scores(v[0], v[1], v[2]); },
                  {random_tensor({2, 5}, 1), random_tensor({2, 3, 5}, 2), random_tensor({1, 5}, 3)});
  // With a pad mask, through the softmax that follows it (the masked scores are −inf).
  Tensor mask = Tensor::zeros({2, 3});
  mask.data()[2] = mask.data()[4] = mask.data()[5] = 1.f;
  check_gradients("additive_attention_scores masked",
                  [&](const std::vector<Var>& v) { return softmax(additive_attention_scores(v[0], v[1], v[2], mask)); },
                  {random_tensor({2, 5}, 4), random_tensor({2, 3, 5}, 5), random_tensor({1, 5}, 6)});
}

TEST_CASE("gradcheck attention context, a masked (zero) weight included") {
  Tensor alpha = random_tensor({2, 3}, 1);
  alpha.data()[5] = 0.f;  // the second sentence's last position, as after a masked softmax
  check_gradients("attention_context", [](const std::vector<Var>& v) { return attention_context(v[0], v[1]); },
                  {alpha, random_tensor({2, 3, 70}, 2)});
}

TEST_CASE("gradcheck composition: 2-layer MLP with cross-entropy") {
  const std::vector<int32_t> targets = {1, 4, 0};
  check_gradients("mlp",
                  [&](const std::vector<Var>& v) {
                    Var h = tanh(linear(v[0], v[1], v[2]));
                    return cross_entropy(linear(h, v[3], v[4]), targets, -1, 0.1f, 3.f);
                  },
                  {random_tensor({3, 5}, 1), random_tensor({7, 5}, 2), random_tensor({7}, 3), random_tensor({5, 7}, 4),
                   random_tensor({5}, 5)});
}

TEST_CASE("gradcheck composition: attention block (projections, masked softmax, residual layer norm)") {
  const int64_t B = 2, S = 3, D = 5;
  Tensor pad = Tensor::from_vector({B, 1, S}, {0, 0, 0, 0, 0, 1});  // last key of sentence 2 is padding
  check_gradients("attention block",
                  [&](const std::vector<Var>& v) {
                    Var x = v[0];
                    Var q = linear(x, v[1], Var()), k = linear(x, v[2], Var()), val = linear(x, v[3], Var());
                    Var scores = masked_fill(scale(matmul(q, k, false, true), 0.4472136f), pad, -1e9f);
                    Var ctx = matmul(softmax(scores), val);
                    return layer_norm(add(x, gelu(ctx)), v[4], v[5]);
                  },
                  {random_tensor({B, S, D}, 1), random_tensor({D, D}, 2), random_tensor({D, D}, 3),
                   random_tensor({D, D}, 4), random_tensor({D}, 5, 0.5f, 1.5f), random_tensor({D}, 6)});
}
