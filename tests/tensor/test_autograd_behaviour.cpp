// Autograd bookkeeping: gradient accumulation, no-grad mode, tape lifetime, gradient storage not
// shared between variables, dropout masks, and the primitive cache staying warm.
#include <omp.h>

#include "check_helpers.hpp"
#include "tensor/dnnl_context.hpp"

using namespace heed;
using heed::test::random_tensor;

namespace {
Var small_loss(const Var& x, const Var& w, const Var& b) {
  return cross_entropy(linear(tanh(linear(x, w, b)), w, Var()), {1, 0, 2}, -1, 0.1f, 3.f);
}
}  // namespace

TEST_CASE("two backward calls accumulate: the gradient doubles") {
  Var x(random_tensor({3, 5}, 1)), w(random_tensor({5, 5}, 2), true), b(random_tensor({5}, 3), true);
  backward(small_loss(x, w, b));
  const auto gw = w.grad().to_vector(), gb = b.grad().to_vector();
  backward(small_loss(x, w, b));
  for (size_t i = 0; i < gw.size(); ++i) REQUIRE(w.grad().data()[i] == Approx(2 * gw[i]).margin(1e-7));
  for (size_t i = 0; i < gb.size(); ++i) REQUIRE(b.grad().data()[i] == Approx(2 * gb[i]).margin(1e-7));
  w.zero_grad();
  CHECK_FALSE(w.grad().defined());
}

TEST_CASE("no-grad mode records nothing; backward clears the tape") {
  Var x(random_tensor({3, 5}, 1)), w(random_tensor({5, 5}, 2), true), b(random_tensor({5}, 3), true);
  clear_tape();
  {
    NoGradGuard guard;
    Var loss = small_loss(x, w, b);
    CHECK(tape_size() == 0);
    CHECK_FALSE(loss.requires_grad());
  }
  CHECK(grad_enabled());
  // Inputs that need no gradient record nothing either.
  small_loss(x, Var(w.value()), Var(b.value()));
  CHECK(tape_size() == 0);
  Var loss = small_loss(x, w, b);
  CHECK(tape_size() > 0);
  backward(loss);
  CHECK(tape_size() == 0);
}

TEST_CASE("gradients of different variables never share storage") {
  // add() hands the output gradient to its first input; the second must get its own copy, and a
  // later accumulation into one must not show up in the other.
  Var p(random_tensor({2, 3}, 1), true), q(random_tensor({2, 3}, 2), true);
  Tensor w = random_tensor({2, 3}, 3);
  backward(sum(mul(add(p, q), Var(w))));
  REQUIRE(p.grad().data() != q.grad().data());
  backward(sum(mul(p, Var(w))));  // only p gets a second contribution
  for (int64_t i = 0; i < 6; ++i) {
    CHECK(p.grad().data()[i] == 2 * w.data()[i]);
    CHECK(q.grad().data()[i] == w.data()[i]);
  }
  // A reshaped parameter used beside itself.
  Var r(random_tensor({6}, 4), true);
  backward(sum(mul(add(reshape(r, {2, 3}), reshape(r, {2, 3})), Var(w))));
  for (int64_t i = 0; i < 6; ++i) CHECK(r.grad().data()[i] == 2 * w.data()[i]);
  // The seeded loss gradient is not shared with a leaf that the loss is a view of.
  Var s(random_tensor({1}, 5), true);
  backward(reshape(s, {1}));
  backward(reshape(s, {1}));
  CHECK(s.grad().item() == 2.f);
}

TEST_CASE("dropout: same rng state gives the same mask, whatever the thread count") {
  const int64_t n = 70001;  // above the size where the mask loop goes parallel
  Var x(Tensor::full({n}, 1.f));
  Rng first(7), second(7);
  const auto m1 = dropout(x, 0.25f, first).value().to_vector();
  const int threads_before = omp_get_max_threads();
  omp_set_num_threads(2);
  const auto m2 = dropout(x, 0.25f, second).value().to_vector();
  omp_set_num_threads(threads_before);
  REQUIRE(m1 == m2);
  CHECK(first.counter() == second.counter());
  int64_t dropped = 0;
  for (float v : m1) {
    REQUIRE((v == 0.f || v == Approx(1 / 0.75f)));
    dropped += v == 0.f;
  }
  CHECK(dropped == Approx(0.25 * n).epsilon(0.03));
  // The next call draws a fresh key: a different mask.
  CHECK(dropout(x, 0.25f, first).value().to_vector() != m1);
  // p = 0 is the identity.
  CHECK(dropout(x, 0.f, first).node() == x.node());
}

TEST_CASE("a repeated forward + backward of the same shapes creates no new primitive") {
  Var x(random_tensor({2, 3, 5}, 1)), w(random_tensor({5, 5}, 2), true), b(random_tensor({5}, 3), true);
  Var g(Tensor::full({5}, 1.f), true), be(Tensor::zeros({5}), true), wh(random_tensor({15, 5}, 4), true),
      bh(random_tensor({15}, 5), true);
  auto step = [&] {
    Var h = layer_norm(gelu(linear(x, w, b)), g, be);
    Var att = matmul(softmax(matmul(h, h, false, true)), h);
    Var seq = gru_sequence(linear(att, wh, bh), wh, bh, {3, 2}, true);
    Var logits = reshape(add(seq, sigmoid(att)), {6, 5});
    backward(add(cross_entropy(log_softmax(logits), {0, 1, 2, 3, 4, 0}, -1, 0.1f, 6.f), sum(tanh(relu(h)))));
    for (const Var* p : {&w, &b, &g, &be, &wh, &bh}) p->zero_grad();
  };
  step();
  const size_t misses = dnnl_ctx::primitive_misses();
  step();
  step();
  CHECK(dnnl_ctx::primitive_misses() == misses);
}

TEST_CASE("primitives are cached per thread count: one made for one thread never serves two") {
  // A oneDNN primitive keeps the thread count it was made with (a decoding worker's one-thread
  // products must not serve the two-thread training step that follows).
  const Tensor x = random_tensor({7, 9}, 11), w = random_tensor({9, 9}, 12);
  const int threads_before = omp_get_max_threads();
  omp_set_num_threads(1);
  const auto one = matmul(Var(x), Var(w)).value().to_vector();
  const size_t misses_one = dnnl_ctx::primitive_misses();
  CHECK(matmul(Var(x), Var(w)).value().to_vector() == one);
  CHECK(dnnl_ctx::primitive_misses() == misses_one);
  omp_set_num_threads(2);
  const size_t misses_two = dnnl_ctx::primitive_misses();
  const auto two = matmul(Var(x), Var(w)).value().to_vector();
  const size_t misses_two_after = dnnl_ctx::primitive_misses();
  omp_set_num_threads(threads_before);
  CHECK(misses_two_after == misses_two + 1);  // its own primitive, made now
  CHECK(two == one);
}

TEST_CASE("relu_dropout equals dropout(relu(x)), values and gradients, and draws like dropout") {
  const int64_t n = 70001;  // both loops go parallel above 65,536 elements
  Tensor xt = Tensor::empty({n});
  Rng init(3);
  init.fill_uniform(xt, -1.f, 1.f);
  xt.data()[0] = 0.f;  // ReLU's kink: no gradient, as oneDNN's ReLU backward
  Tensor weights = Tensor::empty({n});
  init.fill_uniform(weights, -1.f, 1.f);
  Var fused_x(xt.clone(), true), plain_x(xt.clone(), true);
  Rng fused_rng(11), plain_rng(11);
  // One graph at a time: backward() runs and clears the whole tape.
  Var fused = relu_dropout(fused_x, 0.3f, fused_rng);
  backward(sum(mul(fused, Var(weights))));
  Var plain = dropout(relu(plain_x), 0.3f, plain_rng);
  backward(sum(mul(plain, Var(weights))));
  REQUIRE(fused.value().to_vector() == plain.value().to_vector());
  CHECK(fused_rng.counter() == plain_rng.counter());
  REQUIRE(fused_x.grad().to_vector() == plain_x.grad().to_vector());
  CHECK(fused_x.grad().data()[0] == 0.f);
  int64_t zero_grads = 0;
  for (float g : fused_x.grad().to_vector()) zero_grads += g == 0.f;
  // Negative inputs (about half) and dropped positive ones (30% of the rest).
  CHECK(zero_grads == Approx(n * (0.5 + 0.5 * 0.3)).epsilon(0.03));
  // p = 0 is ReLU alone.
  Rng unused(1);
  CHECK(relu_dropout(Var(xt), 0.f, unused).value().to_vector() == relu(Var(xt)).value().to_vector());
  CHECK(unused.counter() == 0);
}
