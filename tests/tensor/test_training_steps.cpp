// Whole training steps: a small GRU tagger and an MLP trained with SGD and Adam written here.
// Two runs with the same seed give bitwise-identical losses over 20 steps, and the loss falls.
// This is also the binary run under the sanitizer build (ASan + LSan + UBSan).
#include <cmath>
#include <cstring>

#include "check_helpers.hpp"

using namespace heed;

namespace {
struct Adam {
  std::vector<Var> params;
  std::vector<Tensor> m, v;
  int step = 0;
  explicit Adam(std::vector<Var> p) : params(std::move(p)) {
    for (auto& x : params) {
      m.push_back(Tensor::zeros(x.shape()));
      v.push_back(Tensor::zeros(x.shape()));
    }
  }
  void update(float lr) {
    ++step;
    const float c1 = 1 - std::pow(0.9f, step), c2 = 1 - std::pow(0.999f, step);
    for (size_t i = 0; i < params.size(); ++i) {
      const Tensor& g = params[i].grad();
      REQUIRE(g.defined());
      float* w = params[i].value().data();
      for (int64_t k = 0; k < g.numel(); ++k) {
        float& mk = m[i].data()[k];
        float& vk = v[i].data()[k];
        mk = 0.9f * mk + 0.1f * g.data()[k];
        vk = 0.999f * vk + 0.001f * g.data()[k] * g.data()[k];
        w[k] -= lr * (mk / c1) / (std::sqrt(vk / c2) + 1e-8f);
      }
      params[i].zero_grad();
    }
  }
};

void sgd(const std::vector<Var>& params, float lr) {
  for (const auto& p : params) {
    add_into(p.value(), [&] {
      Tensor g = p.grad().clone();
      scale_into(g, -lr);
      return g;
    }());
    p.zero_grad();
  }
}

Var param(const Shape& shape, Rng& rng, float range) {
  Tensor t = Tensor::empty(shape);
  rng.fill_uniform(t, -range, range);
  return Var(t, true);
}

// Embedding → bidirectional GRU → dropout → linear → cross-entropy; ragged batch of 3.
std::vector<float> train_gru_tagger(uint64_t seed) {
  const int64_t V = 11, E = 6, H = 5, B = 3, T = 4;
  Rng rng(seed);
  Var emb = param({V, E}, rng, 0.5f), w_ih = param({6 * H, E}, rng, 0.4f), b_ih = param({6 * H}, rng, 0.4f);
  Var w_f = param({3 * H, H}, rng, 0.4f), b_f = param({3 * H}, rng, 0.4f);
  Var w_b = param({3 * H, H}, rng, 0.4f), b_b = param({3 * H}, rng, 0.4f);
  Var w_out = param({V, 2 * H}, rng, 0.4f), b_out = param({V}, rng, 0.4f);
  Adam adam({emb, w_ih, b_ih, w_f, b_f, w_b, b_b, w_out, b_out});
  const std::vector<int32_t> ids = {1, 2, 3, 4, 5, 6, 0, 0, 7, 8, 9, 0}, lengths = {4, 2, 3};
  std::vector<int32_t> targets = {2, 3, 4, 5, 6, 7, -1, -1, 8, 9, 10, -1};
  std::vector<float> losses;
  for (int step = 0; step < 20; ++step) {
    Var gi = linear(embedding(emb, ids, {B, T}), w_ih, b_ih);
    auto halves = split(gi, {3 * H, 3 * H}, 2);
    Var states = concat(
        {gru_sequence(halves[0], w_f, b_f, lengths, false), gru_sequence(halves[1], w_b, b_b, lengths, true)}, 2);
    Var logits = linear(reshape(dropout(states, 0.1f, rng), {B * T, 2 * H}), w_out, b_out);
    Var loss = cross_entropy(logits, targets, -1, 0.1f, 9.f);
    losses.push_back(loss.value().item());
    backward(loss);
    adam.update(0.05f);
  }
  return losses;
}

std::vector<float> train_mlp(uint64_t seed) {
  Rng rng(seed);
  Var w1 = param({13, 7}, rng, 0.5f), b1 = param({13}, rng, 0.1f), w2 = param({5, 13}, rng, 0.5f);
  Tensor x = Tensor::empty({17, 7});
  rng.fill_normal(x, 0, 1);
  std::vector<int32_t> targets(17);
  for (int i = 0; i < 17; ++i) targets[i] = i % 5;
  std::vector<float> losses;
  for (int step = 0; step < 20; ++step) {
    Var loss = cross_entropy(linear(gelu(linear(Var(x), w1, b1)), w2, Var()), targets, -1, 0.f, 17.f);
    losses.push_back(loss.value().item());
    backward(loss);
    sgd({w1, b1, w2}, 0.5f);
  }
  return losses;
}

bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}
}  // namespace

TEST_CASE("GRU tagger with Adam: 20 steps are bitwise reproducible and learn") {
  const auto first = train_gru_tagger(3), second = train_gru_tagger(3);
  CHECK(bitwise_equal(first, second));
  CHECK(first.back() < 0.7f * first.front());
  CHECK_FALSE(bitwise_equal(first, train_gru_tagger(4)));
}

TEST_CASE("MLP with SGD: 20 steps are bitwise reproducible and learn") {
  const auto first = train_mlp(5), second = train_mlp(5);
  CHECK(bitwise_equal(first, second));
  CHECK(first.back() < 0.8f * first.front());
}
