// Adam and AdamW against values computed by hand (torch.optim.Adam/AdamW's bias-corrected update),
// the global gradient norm and clipping.
//
// p0 = [1, −2, 0.5], lr 0.1, β = (0.9, 0.999), ε = 1e-8, g1 = [0.5, −0.1, 0], g2 = [−0.5, 0.3, 0.2].
// Step 1: m̂ = g, v̂ = g², so p1 = p0 − lr·g/(|g| + ε) = [0.9, −1.9, 0.5] (a zero gradient moves nothing).
// Step 2, element 0: m = 0.9·0.05 − 0.1·0.5 = −0.005, v = 0.999·0.00025 + 0.001·0.25 = 0.00049975,
//   m̂ = −0.005/0.19, v̂ = 0.00049975/0.001999 = 0.25, p2 = 0.9 + 0.1·(0.005/0.19)/0.5 = 0.9052631579.
// The other elements, and the weight-decay variants, follow the same arithmetic (double precision).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "train/optimizer.hpp"

using namespace heed;

namespace {
struct OneParameter {
  ParameterSet params;
  Var p;
  OneParameter() { p = params.add("p", Tensor::from_vector({3}, {1.0f, -2.0f, 0.5f})); }
  void set_grad(const std::vector<float>& g) {
    p.zero_grad();
    p.accumulate_grad(Tensor::from_vector({3}, g));
  }
  std::vector<float> value() const { return p.value().to_vector(); }
};

void check_values(const std::vector<float>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(got[i] == Approx(want[i]).epsilon(1e-6).margin(1e-7));
  }
}

std::vector<std::vector<double>> run(const TrainingConfig& options) {
  OneParameter m;
  Adam adam(m.params, options);
  std::vector<std::vector<double>> out;
  m.set_grad({0.5f, -0.1f, 0.0f});
  adam.step(0.1f);
  auto v1 = m.value();
  m.set_grad({-0.5f, 0.3f, 0.2f});
  adam.step(0.1f);
  auto v2 = m.value();
  CHECK(adam.steps() == 2);
  return {{v1.begin(), v1.end()}, {v2.begin(), v2.end()}};
}
}  // namespace

TEST_CASE("Adam: two steps match the hand-computed values") {
  auto steps = run(TrainingConfig{});
  check_values({steps[0].begin(), steps[0].end()}, {0.9, -1.9, 0.5});
  check_values({steps[1].begin(), steps[1].end()}, {0.9052631579, -1.9494189911, 0.4255863229});
}

TEST_CASE("Adam with weight decay adds wd·p to the gradient") {
  TrainingConfig o;
  o.weight_decay = 0.1f;
  auto steps = run(o);
  // step 1, element 2: g = 0 + 0.1·0.5 > 0, so it moves by a full lr
  check_values({steps[0].begin(), steps[0].end()}, {0.9000000017, -1.9000000033, 0.40000002});
  check_values({steps[1].begin(), steps[1].end()}, {0.8866836231, -1.8627221078, 0.3134893994});
}

TEST_CASE("AdamW decays the parameter by lr·wd·p before the Adam step") {
  TrainingConfig o;
  o.weight_decay = 0.1f;
  o.optimizer = OptimizerKind::adamw;
  auto steps = run(o);
  // step 1: p·(1 − 0.01) − 0.1·sign(g): 0.99 − 0.1, −1.98 + 0.1, 0.495
  check_values({steps[0].begin(), steps[0].end()}, {0.89, -1.88, 0.495});
  check_values({steps[1].begin(), steps[1].end()}, {0.8863631598, -1.9106189910, 0.4156363229});
}

TEST_CASE("Adam: a parameter without a gradient is treated as gradient zero") {
  OneParameter m;
  Adam adam(m.params, TrainingConfig{});
  adam.step(0.1f);
  check_values(m.value(), {1.0, -2.0, 0.5});
}

TEST_CASE("Adam state round trip continues identically") {
  OneParameter a, b;
  Adam adam_a(a.params, TrainingConfig{}), adam_b(b.params, TrainingConfig{});
  a.set_grad({0.5f, -0.1f, 0.0f});
  adam_a.step(0.1f);
  // b takes a's parameters and moments, then both take the same second step
  b.p.value().copy_from(a.p.value());
  adam_b.set_state(adam_a.steps(), adam_a.first_moments(), adam_a.second_moments());
  a.set_grad({-0.5f, 0.3f, 0.2f});
  b.set_grad({-0.5f, 0.3f, 0.2f});
  adam_a.step(0.1f);
  adam_b.step(0.1f);
  CHECK(a.value() == b.value());  // bitwise
}

TEST_CASE("global_grad_norm over all parameters; clip_factor scales like torch") {
  ParameterSet params;
  Var a = params.add("a", Tensor::zeros({2}));
  Var b = params.add("b", Tensor::zeros({1, 1}));
  params.add("no_grad", Tensor::zeros({3}));  // undefined gradient: counts as zero
  a.accumulate_grad(Tensor::from_vector({2}, {3.0f, 0.0f}));
  b.accumulate_grad(Tensor::from_vector({1, 1}, {-4.0f}));
  const double norm = global_grad_norm(params);
  CHECK(norm == Approx(5.0));

  CHECK(clip_factor(norm, 10.0f) == 1.0f);  // under the limit: untouched
  CHECK(clip_factor(norm, 1.0f) == static_cast<float>(1.0 / (5.0 + 1e-6)));
}

TEST_CASE("Adam with a gradient scale equals Adam on gradients scaled beforehand") {
  ParameterSet set_a, set_b;
  Var a = set_a.add("w", Tensor::from_vector({3}, {0.5f, -1.f, 2.f}));
  Var b = set_b.add("w", Tensor::from_vector({3}, {0.5f, -1.f, 2.f}));
  Adam adam_a(set_a, TrainingConfig{}), adam_b(set_b, TrainingConfig{});
  const float scale = 0.37f;
  for (int step = 0; step < 3; ++step) {
    const std::vector<float> g = {0.3f * (step + 1), -2.f, 0.01f};
    std::vector<float> scaled;
    for (float x : g) scaled.push_back(x * scale);
    a.accumulate_grad(Tensor::from_vector({3}, g));
    b.accumulate_grad(Tensor::from_vector({3}, scaled));
    adam_a.step(0.1f, scale);
    adam_b.step(0.1f);
    a.zero_grad();
    b.zero_grad();
    CHECK(a.value().to_vector() == b.value().to_vector());  // bitwise
  }
  CHECK(a.value().to_vector() != std::vector<float>{0.5f, -1.f, 2.f});
}

TEST_CASE("global_grad_norm propagates NaN and Inf") {
  ParameterSet params;
  Var a = params.add("a", Tensor::zeros({2}));
  a.accumulate_grad(Tensor::from_vector({2}, {1.0f, std::numeric_limits<float>::quiet_NaN()}));
  CHECK(std::isnan(global_grad_norm(params)));
  a.zero_grad();
  a.accumulate_grad(Tensor::from_vector({2}, {1.0f, std::numeric_limits<float>::infinity()}));
  CHECK(std::isinf(global_grad_norm(params)));
}
