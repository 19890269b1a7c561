// One training update: gradient accumulation normalises by the labels of the whole group (so two
// accumulated batches give the gradient of one batch holding both), and a NaN/Inf loss or
// gradient skips the update without touching parameters or optimizer state.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "../fixtures/tiny_models.hpp"
#include "models/factory.hpp"
#include "train/update.hpp"

using namespace heed;

namespace {
std::unique_ptr<Seq2Seq> tiny_gru() { return make_model(test::tiny_model_config(Arch::gru_bahdanau), 20, 20, 7); }

using Ids = std::vector<std::vector<int32_t>>;
const Ids kSrc1 = {{4, 5, 6}, {7, 8}}, kTgt1 = {{9, 10}, {11, 12, 13, 14}};
const Ids kSrc2 = {{15, 16, 17, 18, 19}}, kTgt2 = {{4, 4, 5}};

Ids concat(Ids a, const Ids& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<std::vector<float>> gradients(const ParameterSet& params) {
  std::vector<std::vector<float>> out;
  for (const auto& [name, var] : params.all())
    out.push_back(var.grad().defined() ? var.grad().to_vector() : std::vector<float>(var.value().numel(), 0.f));
  return out;
}

std::vector<std::vector<float>> gradients_of(Seq2Seq& model, const std::vector<Batch>& group,
                                             CrossEntropyStats* stats) {
  model.parameters().zero_grad();
  *stats = accumulate_gradients(model, group, 0.1f);
  auto g = gradients(model.parameters());
  model.parameters().zero_grad();
  return g;
}
}  // namespace

TEST_CASE("accumulated batches: the loss is normalised by all labels of the group") {
  auto model = tiny_gru();
  model->set_training(false);
  const Batch b1 = make_batch(kSrc1, kTgt1), b2 = make_batch(kSrc2, kTgt2);
  const Batch both = make_batch(concat(kSrc1, kSrc2), concat(kTgt1, kTgt2));
  REQUIRE(b1.num_labels() == 8);  // 2+1 and 4+1 with </s>
  REQUIRE(b2.num_labels() == 4);

  CrossEntropyStats s1, s2, s12, s_both;
  auto g1 = gradients_of(*model, {b1}, &s1);
  auto g2 = gradients_of(*model, {b2}, &s2);
  auto g12 = gradients_of(*model, {b1, b2}, &s12);
  auto g_both = gradients_of(*model, {both}, &s_both);

  CHECK(s12.labels == 12);
  CHECK(s12.loss_sum == Approx(s1.loss_sum + s2.loss_sum).epsilon(1e-6));
  CHECK(s12.loss_sum == Approx(s_both.loss_sum).epsilon(1e-5));
  double max_diff_weighted = 0, max_diff_one_batch = 0, max_grad = 0;
  for (size_t p = 0; p < g12.size(); ++p)
    for (size_t i = 0; i < g12[p].size(); ++i) {
      // the mean over 12 labels = (8·mean over b1 + 4·mean over b2) / 12
      const double weighted = (8.0 * g1[p][i] + 4.0 * g2[p][i]) / 12.0;
      max_diff_weighted = std::max(max_diff_weighted, std::abs(g12[p][i] - weighted));
      max_diff_one_batch = std::max(max_diff_one_batch, double(std::abs(g12[p][i] - g_both[p][i])));
      max_grad = std::max(max_grad, double(std::abs(g12[p][i])));
    }
  REQUIRE(max_grad > 1e-3);  // the comparison means something
  CHECK(max_diff_weighted < 1e-6 * max_grad + 1e-8);
  CHECK(max_diff_one_batch < 1e-5 * max_grad + 1e-7);
}

TEST_CASE("apply_update: a finite step updates, clips, counts and clears the gradients") {
  auto model = tiny_gru();
  const ParameterSet& params = model->parameters();
  Adam adam(params, TrainingConfig{});
  const auto before = params.all().front().second.value().to_vector();
  auto stats = accumulate_gradients(*model, {make_batch(kSrc1, kTgt1)}, 0.1f);
  const double norm = global_grad_norm(params);
  const auto grad = params.all().front().second.grad().to_vector();  // apply_update clears it
  UpdateOutcome out = apply_update(params, adam, stats.loss_sum, 1e-3f, 0.01f);
  CHECK(out.applied);
  CHECK(out.grad_norm == Approx(norm));
  CHECK(adam.steps() == 1);
  CHECK(params.all().front().second.value().to_vector() != before);
  for (const auto& [name, var] : params.all()) CHECK_FALSE(var.grad().defined());
  // Clipped: Adam's step barely tells a scaled gradient apart, its first moment does. After one
  // step it is (1 − β1) · the clipped gradient.
  const float scale = clip_factor(norm, 1e-3f);
  REQUIRE(scale < 0.1f);
  const auto m = adam.first_moments().front().to_vector();
  REQUIRE(m.size() == grad.size());
  double largest = 0;
  for (size_t i = 0; i < grad.size(); ++i) {
    CHECK(m[i] == Approx(0.1 * grad[i] * scale).margin(1e-12));
    largest = std::max(largest, std::fabs(double(m[i])));
  }
  CHECK(largest > 0);
}

TEST_CASE("apply_update: NaN/Inf in the gradient or the loss skips the update") {
  auto model = tiny_gru();
  const ParameterSet& params = model->parameters();
  Adam adam(params, TrainingConfig{});
  auto snapshot = [&] {
    std::vector<std::vector<float>> v;
    for (const auto& [name, var] : params.all()) v.push_back(var.value().to_vector());
    return v;
  };
  const auto before = snapshot();
  const float bad[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()};
  for (float x : bad) {
    auto stats = accumulate_gradients(*model, {make_batch(kSrc1, kTgt1)}, 0.1f);
    Var p = params.all().back().second;
    std::vector<float> poison(p.value().numel(), 0.f);
    poison[0] = x;
    p.accumulate_grad(Tensor::from_vector(p.shape(), poison));
    UpdateOutcome out = apply_update(params, adam, stats.loss_sum, 1.0f, 0.01f);
    CHECK_FALSE(out.applied);
    CHECK_FALSE(std::isfinite(out.grad_norm));
  }
  // a non-finite loss with finite gradients
  auto stats = accumulate_gradients(*model, {make_batch(kSrc1, kTgt1)}, 0.1f);
  CHECK_FALSE(apply_update(params, adam, std::numeric_limits<double>::infinity(), 1.0f, 0.01f).applied);
  CHECK(stats.labels == 8);

  CHECK(adam.steps() == 0);
  CHECK(snapshot() == before);
  int nonzero_moments = 0, gradients_left = 0;
  for (const auto& m : adam.first_moments())
    for (float x : m.to_vector()) nonzero_moments += x != 0.f;
  for (const auto& [name, var] : params.all()) gradients_left += var.grad().defined();
  CHECK(nonzero_moments == 0);
  CHECK(gradients_left == 0);
}
