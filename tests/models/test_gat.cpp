// The GAT model: its parameter count (the reference's 92,391 at the Cora sizes), a
// finite-difference check of every parameter gradient on odd graphs (several heads, hidden heads
// concatenated after ELU and output heads averaged, dropout off), permutation equivariance, and
// dropout that depends on the seed only.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>

#include "models/gat.hpp"
#include "tensor/ops.hpp"

using namespace heed;

namespace {

// 7 nodes with self-loops: 0 isolated, 1 a hub joined to 2–6, 2–3 and 4–5 pairs, 6 a leaf.
Csr odd_graph() {
  std::vector<std::pair<int32_t, int32_t>> e;
  for (int32_t i = 0; i < 7; ++i) e.push_back({i, i});
  for (int32_t j = 2; j < 7; ++j) e.insert(e.end(), {{1, j}, {j, 1}});
  e.insert(e.end(), {{2, 3}, {3, 2}, {4, 5}, {5, 4}});
  return make_csr(7, 7, e);
}

SparseRows random_features(int64_t N, int64_t F, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::pair<int32_t, int32_t>> entries;
  for (int32_t i = 0; i < N; ++i)
    for (int32_t c = 0; c < F; ++c)
      if (rng() % 3 == 0) entries.push_back({i, c});
  SparseRows x{make_csr(N, F, entries), {}};
  for (int64_t k = 0; k < x.pattern.nnz(); ++k) x.values.push_back(0.25f + (rng() % 100) / 100.f);
  return x;
}

ModelConfig small_config(float negative_slope) {
  ModelConfig c;
  c.arch = Arch::gat;
  c.dropout = 0.5f;
  c.gat.layers = 2;
  c.gat.hidden = 2;
  c.gat.heads = 3;
  c.gat.output_heads = 2;
  c.gat.attention_dropout = 0.5f;
  c.gat.negative_slope = negative_slope;
  return c;
}

double weighted_outputs(Gat& model, const SparseRows& x, const Csr& g, const Tensor& w) {
  const Tensor y = model.forward(NodeFeatures{&x, Var()}, g).value();
  double total = 0;
  for (int64_t k = 0; k < y.numel(); ++k) total += double(w.data()[k]) * y.data()[k];
  return total;
}

// Every parameter's gradient of L = Σ w·outputs against central differences (Richardson:
// (4·D(h) − D(2h)) / 3, h = 1e-2), tolerance as in tests/tensor/check_helpers.hpp.
double check_model_gradients(Gat& model, const SparseRows& x, const Csr& g) {
  model.set_training(false);  // dropout off
  const Shape out_shape{g.rows, model.outputs()};
  Tensor w = Tensor::empty(out_shape);
  Rng(99).fill_uniform(w, -1.f, 1.f);
  model.parameters().zero_grad();
  backward(sum(mul(model.forward(NodeFeatures{&x, Var()}, g), Var(w))));
  NoGradGuard no_grad;
  auto difference = [&](float* theta, double h) {
    const float saved = *theta;
    *theta = static_cast<float>(saved + h);
    const double xp = *theta, lp = weighted_outputs(model, x, g, w);
    *theta = static_cast<float>(saved - h);
    const double xm = *theta, lm = weighted_outputs(model, x, g, w);
    *theta = saved;
    return (lp - lm) / (xp - xm);
  };
  double worst = 0;
  for (const auto& [name, var] : model.parameters().all()) {
    std::vector<double> numeric(var.value().numel());
    double scale = 0;
    for (size_t j = 0; j < numeric.size(); ++j) {
      float* theta = var.value().data() + j;
      numeric[j] = (4 * difference(theta, 1e-2) - difference(theta, 2e-2)) / 3;
      scale = std::max(scale, std::fabs(numeric[j]));
    }
    REQUIRE(var.grad().defined());
    for (size_t j = 0; j < numeric.size(); ++j) {
      const double analytic = var.grad().data()[j];
      const double err = std::fabs(analytic - numeric[j]) / std::max({std::fabs(numeric[j]), 0.1 * scale, 1e-6});
      worst = std::max(worst, err);
      INFO(name << " element " << j << " analytic " << analytic << " numeric " << numeric[j]);
      REQUIRE(err <= 1e-2);
    }
  }
  return worst;
}

void randomise_biases(Gat& model, uint64_t seed) {
  Rng rng(seed);
  for (const auto& [name, var] : model.parameters().all())
    if (name.find(".b") != std::string::npos) rng.fill_uniform(var.value(), -0.5f, 0.5f);
}

GraphAttentionLayer layer_of(const Gat& model, int l) {
  const std::string n = "layer" + std::to_string(l);
  const ParameterSet& p = model.parameters();
  GraphAttentionLayer layer;
  layer.W = p.get(n + ".W"), layer.a1 = p.get(n + ".a1"), layer.a2 = p.get(n + ".a2");
  layer.b1 = p.get(n + ".b1"), layer.b2 = p.get(n + ".b2"), layer.bias = p.get(n + ".bias");
  return layer;
}

// How a model's scores s_i + t_j sit around the LeakyReLU's kink, over both layers: the nearest
// one's distance, and whether some node has neighbours on both sides in every layer.
struct KinkMargin {
  double nearest = 1e9;
  bool both_sides = true;
};
KinkMargin kink_margin(const Gat& model, const SparseRows& x, const Csr& g) {
  NoGradGuard no_grad;
  Rng none;
  const GraphAttentionLayer l1 = layer_of(model, 1), l2 = layer_of(model, 2);
  Var g1 = sparse_multihead_linear(x, l1.W, 0.f, none);
  const Var y1 = l1(NodeFeatures{&x, Var()}, g, {}, none);
  const Var hidden = reshape(elu(y1), {g.rows, y1.dim(1) * y1.dim(2)});
  const int64_t H2 = l2.W.dim(0), F2 = l2.W.dim(2);
  Var g2 = reshape(matmul(hidden, reshape(permute(l2.W, {1, 0, 2}), {hidden.dim(1), H2 * F2})), {g.rows, H2, F2});
  KinkMargin m;
  for (auto [projected, l] : {std::pair{g1, l1}, std::pair{g2, l2}}) {
    const Tensor s = add(per_head_dot(projected, l.a1), l.b1).value(),
                 t = add(per_head_dot(projected, l.a2), l.b2).value();
    const int64_t H = s.dim(1);
    bool mixed = false;
    for (int64_t i = 0; i < g.rows; ++i)
      for (int64_t h = 0; h < H; ++h) {
        bool positive = false, negative = false;
        for (int64_t k = g.offsets[i]; k < g.offsets[i + 1]; ++k) {
          const double z = s.data()[i * H + h] + t.data()[g.column[k] * H + h];
          m.nearest = std::min(m.nearest, std::fabs(z));
          (z > 0 ? positive : negative) = true;
        }
        mixed |= positive && negative;
      }
    m.both_sides &= mixed;
  }
  return m;
}

// A model whose scores all lie >= 0.1 from the kink (difference quotients straddling it would be
// wrong), with both of its sides in use: the first such seed, the attention vectors scaled up so
// that the scores spread wide.
Gat model_off_the_kink(const ModelConfig& config, const SparseRows& x, const Csr& g, int64_t outputs) {
  for (uint64_t seed = 1; seed < 1000; ++seed) {
    Gat model(config, x.pattern.cols, outputs, seed);
    randomise_biases(model, seed + 1000);
    for (const auto& [name, var] : model.parameters().all())
      if (name.find(".a") != std::string::npos) scale_into(var.value(), 4.f);
    const KinkMargin m = kink_margin(model, x, g);
    if (m.nearest >= 0.1 && m.both_sides) return model;
  }
  throw std::runtime_error("no initialisation keeps the scores off the LeakyReLU's kink");
}

}  // namespace

TEST_CASE("GAT parameters: the reference's count at the Cora sizes, the formula, PyTorch names", "[gat]") {
  ModelConfig c;
  c.arch = Arch::gat;  // the defaults are the paper's: 8 heads x 8 hidden, 1 output head
  Gat model(c, 1433, 7, 1);
  CHECK(model.parameters().count() == 92391);
  CHECK(gat_parameter_count(c, 1433, 7) == 92391);
  std::vector<std::string> names;
  for (const auto& [name, var] : model.parameters().all()) names.push_back(name);
  CHECK(names == std::vector<std::string>{"layer1.W", "layer1.a1", "layer1.a2", "layer1.b1", "layer1.b2", "layer1.bias",
                                          "layer2.W", "layer2.a1", "layer2.a2", "layer2.b1", "layer2.b2",
                                          "layer2.bias"});
  CHECK(model.parameters().get("layer1.W").shape() == Shape{8, 1433, 8});
  CHECK(model.parameters().get("layer2.W").shape() == Shape{1, 64, 7});
  c.gat.layers = 3;
  CHECK(gat_parameter_count(c, 10, 4) == Gat(c, 10, 4, 1).parameters().count());
}

TEST_CASE("GAT gradcheck: 2 hidden heads concatenated, 2 output heads averaged, odd graphs", "[gat]") {
  ModelConfig config = small_config(0.2f);
  config.gat.heads = 2;
  const Csr g = odd_graph();
  const SparseRows x = random_features(7, 5, 3);
  Gat model = model_off_the_kink(config, x, g, 3);
  std::printf("gradcheck GAT model, odd graph: max scaled error %.2e\n", check_model_gradients(model, x, g));
  // One node: its only neighbour is itself, every coefficient is 1, and no gradient reaches the
  // scores (a₁, a₂, b₁, b₂): the check compares those with exact zeros.
  const Csr one = make_csr(1, 1, {{0, 0}});
  const SparseRows y = random_features(1, 5, 5);
  Gat single(config, 5, 3, 6);
  randomise_biases(single, 7);
  std::printf("gradcheck GAT model, one node: max scaled error %.2e\n", check_model_gradients(single, y, one));
}

TEST_CASE("GAT is permutation equivariant: relabelled nodes give relabelled outputs", "[gat]") {
  const int64_t N = 7, F = 5;
  const Csr g = odd_graph();
  const SparseRows x = random_features(N, F, 8);
  std::vector<int32_t> perm(N);  // node i becomes perm[i]
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937(9));
  std::vector<std::pair<int32_t, int32_t>> edges, entries;
  for (int64_t k = 0; k < g.nnz(); ++k) edges.push_back({perm[g.row[k]], perm[g.column[k]]});
  for (int64_t k = 0; k < x.pattern.nnz(); ++k) entries.push_back({perm[x.pattern.row[k]], x.pattern.column[k]});
  const Csr pg = make_csr(N, N, edges);
  SparseRows px{make_csr(N, F, entries), std::vector<float>(x.values.size())};
  for (int64_t k = 0; k < x.pattern.nnz(); ++k) {  // the value of each entry at its new place
    const int32_t r = perm[x.pattern.row[k]], c = x.pattern.column[k];
    for (int64_t e = px.pattern.offsets[r]; e < px.pattern.offsets[r + 1]; ++e)
      if (px.pattern.column[e] == c) px.values[e] = x.values[k];
  }
  Gat model(small_config(0.2f), F, 3, 10);
  randomise_biases(model, 11);
  NoGradGuard no_grad;
  const Tensor out = model.forward(NodeFeatures{&x, Var()}, g).value();
  const Tensor permuted = model.forward(NodeFeatures{&px, Var()}, pg).value();
  for (int64_t i = 0; i < N; ++i)
    for (int64_t c = 0; c < 3; ++c) {
      INFO("node " << i << " → " << perm[i] << ", output " << c);
      CHECK(permuted.data()[perm[i] * 3 + c] == Approx(out.data()[i * 3 + c]).margin(1e-6));
    }
}

TEST_CASE("GAT dropout: training outputs depend on the seed's generator only; evaluation has none", "[gat]") {
  const Csr g = odd_graph();
  const SparseRows x = random_features(7, 5, 12);
  auto run = [&](bool training, uint64_t rng_seed) {
    Gat model(small_config(0.2f), 5, 3, 13);
    model.set_training(training);
    model.rng().set_state(rng_seed, 0);
    NoGradGuard no_grad;
    return model.forward(NodeFeatures{&x, Var()}, g).value().to_vector();
  };
  CHECK(run(true, 1) == run(true, 1));
  CHECK(run(true, 1) != run(true, 2));
  CHECK(run(false, 1) == run(false, 2));
  CHECK(run(true, 1) != run(false, 1));
}
