// The attention core (nn/attention.hpp): every fused path against the generic path, values and
// gradients; the sparse graph path against the dense masked one; the generic paths against
// their formulas in double precision; finite-difference gradient checks of the paths that have
// no fused twin (dot product, cosine, graph over a dense mask) and of a whole GAT layer.
#include <cmath>

#include "../tensor/check_helpers.hpp"
#include "nn/attention.hpp"
#include "nn/graph_attention_layer.hpp"
#include "tensor/ops.hpp"

using namespace heed;
using heed::test::check_gradients;
using heed::test::OpFn;
using heed::test::random_tensor;

namespace {

// Runs f and g on the same inputs, then backward with the same random output weights; the
// outputs and every input's gradient must agree to `tolerance` (absolute, values O(1)).
void require_same(const std::string& name, const OpFn& f, const OpFn& g, const std::vector<Tensor>& inputs,
                  double tolerance = 2e-6) {
  auto run = [&](const OpFn& op, std::vector<std::vector<float>>& grads) {
    std::vector<Var> vars;
    for (const auto& t : inputs) vars.emplace_back(t.clone(), true);
    Var out = op(vars);
    const Tensor value = out.value().clone();
    backward(sum(mul(out, Var(random_tensor(out.shape(), 99)))));
    for (const auto& v : vars) grads.push_back(v.grad().defined() ? v.grad().to_vector() : std::vector<float>());
    return value;
  };
  std::vector<std::vector<float>> gf, gg;
  const Tensor vf = run(f, gf), vg = run(g, gg);
  INFO(name);
  REQUIRE(vf.shape() == vg.shape());
  double worst_value = 0, worst_grad = 0;
  for (int64_t k = 0; k < vf.numel(); ++k)
    worst_value = std::max(worst_value, double(std::fabs(vf.data()[k] - vg.data()[k])));
  for (size_t i = 0; i < inputs.size(); ++i) {
    REQUIRE(gf[i].size() == gg[i].size());
    for (size_t k = 0; k < gf[i].size(); ++k) worst_grad = std::max(worst_grad, double(std::fabs(gf[i][k] - gg[i][k])));
  }
  INFO("max |difference|: values " << worst_value << ", gradients " << worst_grad);
  CHECK(worst_value <= tolerance);
  CHECK(worst_grad <= tolerance);
}

// 6 nodes with self-loops: 0 isolated, 1 a hub joined to everyone, 2–3 and 4–5 pairs.
Csr odd_graph() {
  std::vector<std::pair<int32_t, int32_t>> e;
  for (int32_t i = 0; i < 6; ++i) e.push_back({i, i});
  for (int32_t j = 2; j < 6; ++j) e.insert(e.end(), {{1, j}, {j, 1}});
  e.insert(e.end(), {{2, 3}, {3, 2}, {4, 5}, {5, 4}});
  return make_csr(6, 6, e);
}

// 1 where node j is not a neighbour of node i: the dense key set of the same graph.
Tensor non_edges(const Csr& g) {
  Tensor m = Tensor::full({g.rows, g.cols}, 1.f);
  for (int64_t k = 0; k < g.nnz(); ++k) m.data()[g.row[k] * g.cols + g.column[k]] = 0.f;
  return m;
}

// t alternates sign between nodes with |t| ≥ 0.3, |s| ≤ 0.1: s_i + t_j keeps off the leaky
// ReLU's kink, and a node's neighbours lie on both of its sides (so gradients reach s).
Tensor target_terms(int64_t N, int64_t H, uint64_t seed) {
  Tensor t = random_tensor({N, H}, seed, 0.3f, 1.f);
  for (int64_t i = 0; i < N; i += 2)
    for (int64_t h = 0; h < H; ++h) t.data()[i * H + h] = -t.data()[i * H + h];
  return t;
}

attention::Options with(float dropout, Rng* rng, bool generic) {
  attention::Options o;
  o.dropout = dropout;
  o.rng = rng;
  o.generic = generic;
  return o;
}

}  // namespace

TEST_CASE("additive attention: the fused kernels equal the generic path, padding masked", "[attention]") {
  const int64_t B = 3, S = 5, A = 4, D = 6;
  Tensor pad = Tensor::zeros({B, S});
  pad.data()[1 * S + 4] = pad.data()[2 * S + 3] = pad.data()[2 * S + 4] = 1.f;
  auto path = [&](bool generic) {
    return [=](const std::vector<Var>& v) {
      return attention::attend(attention::AdditiveScore{v[0], v[1], v[2]}, attention::DenseKeys{pad, {}}, v[3],
                               with(0.f, nullptr, generic));
    };
  };
  const std::vector<Tensor> inputs = {random_tensor({B, A}, 1), random_tensor({B, S, A}, 2), random_tensor({1, A}, 3),
                                      random_tensor({B, S, D}, 4)};
  require_same("additive fused vs generic", path(false), path(true), inputs);
  // Masked positions get exactly zero weight on both paths.
  for (bool generic : {false, true}) {
    Tensor weights;
    attention::Options o = with(0.f, nullptr, generic);
    o.weights = &weights;
    attention::attend(attention::AdditiveScore{Var(inputs[0]), Var(inputs[1]), Var(inputs[2])},
                      attention::DenseKeys{pad, {}}, Var(inputs[3]), o);
    CHECK(weights.data()[1 * S + 4] == 0.f);
    CHECK(weights.data()[2 * S + 3] == 0.f);
  }
}

TEST_CASE("graph attention: fused over neighbour lists = generic over neighbour lists = dense masked N x N",
          "[attention][gat]") {
  const Csr g = odd_graph();
  const Tensor mask = non_edges(g);
  const int64_t N = g.rows, H = 3, F = 4;
  const std::vector<Tensor> inputs = {random_tensor({N, H}, 1, -0.1f, 0.1f), target_terms(N, H, 2),
                                      random_tensor({N, H, F}, 3)};
  auto sparse = [&](bool generic, float p) {
    return [=, &g](const std::vector<Var>& v) {
      Rng rng(5);
      return attention::attend(attention::GraphScore{v[0], v[1], 0.2f}, attention::NeighbourKeys{&g}, v[2],
                               with(p, &rng, generic));
    };
  };
  auto dense = [&](const std::vector<Var>& v) {
    return attention::attend(attention::GraphScore{v[0], v[1], 0.2f}, attention::DenseKeys{mask, {}}, v[2]);
  };
  require_same("graph fused vs generic", sparse(false, 0.f), sparse(true, 0.f), inputs);
  require_same("graph fused vs dense mask", sparse(false, 0.f), dense, inputs);
  // With coefficient dropout the fused kernel draws the generic path's mask (same key, same
  // element order), so the two still agree.
  require_same("graph fused vs generic, dropout 0.5", sparse(false, 0.5f), sparse(true, 0.5f), inputs);
  check_gradients("graph attention over a dense mask", dense, inputs);
}

TEST_CASE("dot-product attention: the generic path is its formula; gradcheck with a frame and a mask", "[attention]") {
  const int64_t B = 2, h = 2, T = 3, S = 4, d = 5;
  Tensor pad = Tensor::zeros({B, 1, 1, S});
  pad.data()[1 * S + 3] = 1.f;  // sentence 1: last key is padding
  auto f = [&](const std::vector<Var>& v) {
    return attention::attend(attention::DotProductScore{v[0], v[1]}, attention::DenseKeys{pad, {B, h, T, S}}, v[2]);
  };
  const std::vector<Tensor> inputs = {random_tensor({B * h, T, d}, 1), random_tensor({B * h, S, d}, 2),
                                      random_tensor({B * h, S, 3}, 3)};
  std::vector<Var> vars;
  for (const auto& t : inputs) vars.emplace_back(t);
  const Tensor out = f(vars).value();
  for (int64_t gi = 0; gi < B * h; ++gi)
    for (int64_t i = 0; i < T; ++i) {
      std::vector<double> e(S);
      double top = -1e300, total = 0;
      for (int64_t j = 0; j < S; ++j) {
        for (int64_t c = 0; c < d; ++c)
          e[j] +=
              double(inputs[0].data()[(gi * T + i) * d + c]) * inputs[1].data()[(gi * S + j) * d + c] / std::sqrt(5.0);
        if (pad.data()[(gi / h) * S + j] == 0.f) top = std::max(top, e[j]);
      }
      for (int64_t j = 0; j < S; ++j) total += e[j] = pad.data()[(gi / h) * S + j] != 0.f ? 0.0 : std::exp(e[j] - top);
      for (int64_t c = 0; c < 3; ++c) {
        double expected = 0;
        for (int64_t j = 0; j < S; ++j) expected += e[j] / total * inputs[2].data()[(gi * S + j) * 3 + c];
        CHECK(out.data()[(gi * T + i) * 3 + c] == Approx(expected).margin(1e-6));
      }
    }
  check_gradients("dot-product attention", f, inputs);
}

TEST_CASE("cosine attention (content addressing): its formula, and gradcheck", "[attention]") {
  const int64_t B = 2, S = 4, D = 3;
  auto f = [&](const std::vector<Var>& v) {
    return attention::attend(attention::CosineScore{v[0], v[1], v[2]}, attention::DenseKeys{}, v[3]);
  };
  const std::vector<Tensor> inputs = {random_tensor({B, D}, 1), random_tensor({B, S, D}, 2),
                                      random_tensor({B}, 3, 0.5f, 3.f), random_tensor({B, S, 2}, 4)};
  std::vector<Var> vars;
  for (const auto& t : inputs) vars.emplace_back(t);
  const Tensor out = f(vars).value();
  for (int64_t b = 0; b < B; ++b) {
    std::vector<double> e(S);
    double total = 0;
    for (int64_t j = 0; j < S; ++j) {
      double qk = 0, qq = 0, kk = 0;
      for (int64_t c = 0; c < D; ++c) {
        const double q = inputs[0].data()[b * D + c], k = inputs[1].data()[(b * S + j) * D + c];
        qk += q * k;
        qq += q * q;
        kk += k * k;
      }
      total += e[j] = std::exp(inputs[2].data()[b] * qk / std::sqrt(qq * kk));
    }
    for (int64_t c = 0; c < 2; ++c) {
      double expected = 0;
      for (int64_t j = 0; j < S; ++j) expected += e[j] / total * inputs[3].data()[(b * S + j) * 2 + c];
      CHECK(out.data()[b * 2 + c] == Approx(expected).margin(1e-6));
    }
  }
  check_gradients("cosine attention", f, inputs);
}

TEST_CASE("GAT layer: gradcheck with several heads on sparse and dense input; fused = generic", "[gat]") {
  const Csr g = odd_graph();
  const int64_t N = g.rows, in = 5, H = 3, F = 2;
  SparseRows x{make_csr(N, in, {{0, 1}, {1, 0}, {1, 4}, {2, 2}, {3, 3}, {3, 0}, {5, 4}}), {}};  // node 4: no features
  x.values = {1.f, 0.5f, -1.f, 2.f, 0.25f, 1.f, -0.5f};
  // Difference quotients break where a step crosses the leaky ReLU's kink: take the first
  // initialisation whose s_i + t_j all lie ≥ 0.06 from it, with some node's neighbours on both
  // of its sides (else the softmax cancels every gradient that reaches s, a₁ and b₁).
  GraphAttentionLayer layer;
  for (uint64_t seed = 1; seed < 500 && !layer.W.defined(); ++seed) {
    ParameterSet params;
    Rng init(seed);
    GraphAttentionLayer candidate(params, "layer1", in, F, H, init);
    init.fill_uniform(candidate.b1.value(), -0.5f, 0.5f);
    init.fill_uniform(candidate.bias.value(), -0.5f, 0.5f);
    NoGradGuard no_grad;
    Rng unused;
    Var projected = sparse_multihead_linear(x, candidate.W, 0.f, unused);
    const Tensor s = add(per_head_dot(projected, candidate.a1), candidate.b1).value();
    const Tensor t = add(per_head_dot(projected, candidate.a2), candidate.b2).value();
    double nearest = 1e9;
    bool both_sides = false;
    for (int64_t i = 0; i < N; ++i)
      for (int64_t h = 0; h < H; ++h) {
        bool positive = false, negative = false;
        for (int64_t k = g.offsets[i]; k < g.offsets[i + 1]; ++k) {
          const double z = s.data()[i * H + h] + t.data()[g.column[k] * H + h];
          nearest = std::min(nearest, std::fabs(z));
          (z > 0 ? positive : negative) = true;
        }
        both_sides |= positive && negative;
      }
    if (nearest >= 0.06 && both_sides) layer = candidate;
  }
  REQUIRE(layer.W.defined());
  const std::vector<Tensor> weights = {layer.W.value(),  layer.a1.value(), layer.a2.value(),
                                       layer.b1.value(), layer.b2.value(), layer.bias.value()};
  auto run = [&](const std::vector<Var>& v, const NodeFeatures& input, bool generic) {
    GraphAttentionLayer l;
    l.W = v[0], l.a1 = v[1], l.a2 = v[2], l.b1 = v[3], l.b2 = v[4], l.bias = v[5];
    GraphAttentionLayer::Settings settings;
    settings.generic = generic;
    Rng unused;
    return l(input, g, settings, unused);
  };
  const NodeFeatures sparse{&x, Var()};
  check_gradients(
      "GAT layer, sparse input", [&](const std::vector<Var>& v) { return run(v, sparse, false); }, weights);
  // The same rows dense: equal output; gradients also flow into the input.
  Tensor dense = Tensor::zeros({N, in});
  for (int64_t k = 0; k < x.pattern.nnz(); ++k) dense.data()[x.pattern.row[k] * in + x.pattern.column[k]] = x.values[k];
  std::vector<Tensor> with_input = weights;
  with_input.push_back(dense);
  check_gradients(
      "GAT layer, dense input",
      [&](const std::vector<Var>& v) {
        return run(v, NodeFeatures{nullptr, v[6]}, false);
      },
      with_input);
  require_same(
      "GAT layer sparse vs dense input", [&](const std::vector<Var>& v) { return run(v, sparse, false); },
      [&](const std::vector<Var>& v) {
        return run(v, NodeFeatures{nullptr, Var(dense)}, false);
      },
      weights);
  require_same(
      "GAT layer fused vs generic", [&](const std::vector<Var>& v) { return run(v, sparse, false); },
      [&](const std::vector<Var>& v) { return run(v, sparse, true); }, weights);
}
