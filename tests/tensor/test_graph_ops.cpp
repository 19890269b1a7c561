// The sparse graph ops: CSR patterns, finite-difference gradient checks (method and tolerance in
// check_helpers.hpp) on odd graphs — an isolated node with only its self-loop, a node with many
// neighbours, a graph of one node, a rectangular pattern — and the fused ops' values against
// plain double-precision loops. Plus the new activations (leaky ReLU, ELU) and l2_normalize.
#include <cmath>

#include "check_helpers.hpp"
#include "tensor/graph_ops.hpp"

using namespace heed;
using heed::test::check_gradients;
using heed::test::random_tensor;

namespace {

// 6 nodes with self-loops: 0 isolated, 1 a hub joined to everyone, 2–3 and 4–5 pairs.
Csr odd_graph() {
  std::vector<std::pair<int32_t, int32_t>> e;
  for (int32_t i = 0; i < 6; ++i) e.push_back({i, i});
  for (int32_t j = 2; j < 6; ++j) e.insert(e.end(), {{1, j}, {j, 1}});
  e.insert(e.end(), {{2, 3}, {3, 2}, {4, 5}, {5, 4}});
  return make_csr(6, 6, e);
}

Csr one_node() { return make_csr(1, 1, {{0, 0}}); }

// t alternates sign between nodes with |t| ≥ 0.3, and |s| ≤ 0.1: every s_i + t_j stays ≥ 0.2
// away from the leaky ReLU's kink under the check's ±1e-2 steps, and a node's neighbours fall on
// both of its sides (on one side only, the softmax would cancel every gradient reaching s).
Tensor target_terms(int64_t N, int64_t H, uint64_t seed) {
  Tensor t = random_tensor({N, H}, seed, 0.3f, 1.f);
  for (int64_t i = 0; i < N; i += 2)
    for (int64_t h = 0; h < H; ++h) t.data()[i * H + h] = -t.data()[i * H + h];
  return t;
}

// out[i, h, :] = Σ_j α_ij v[j, h, :] in double, without dropout.
std::vector<double> attention_by_loops(const Tensor& s, const Tensor& t, const Tensor& v, const Csr& c, double slope) {
  const int64_t H = v.dim(1), F = v.dim(2);
  std::vector<double> out(c.rows * H * F, 0.0);
  for (int64_t i = 0; i < c.rows; ++i)
    for (int64_t h = 0; h < H; ++h) {
      double top = -1e300, total = 0;
      std::vector<double> e;
      for (int64_t k = c.offsets[i]; k < c.offsets[i + 1]; ++k) {
        const double z = double(s.data()[i * H + h]) + t.data()[c.column[k] * H + h];
        e.push_back(z > 0 ? z : slope * z);
        top = std::max(top, e.back());
      }
      for (double& x : e) total += x = std::exp(x - top);
      for (int64_t k = c.offsets[i]; k < c.offsets[i + 1]; ++k)
        for (int64_t f = 0; f < F; ++f)
          out[(i * H + h) * F + f] += e[k - c.offsets[i]] / total * v.data()[(c.column[k] * H + h) * F + f];
    }
  return out;
}

}  // namespace

TEST_CASE("make_csr: rows sorted, duplicates kept once, the column index, out-of-range entries refused") {
  Csr c = make_csr(3, 4, {{2, 1}, {0, 3}, {0, 0}, {2, 1}, {0, 3}, {2, 0}});
  CHECK(c.offsets == std::vector<int64_t>{0, 2, 2, 4});
  CHECK(c.column == std::vector<int32_t>{0, 3, 0, 1});
  CHECK(c.row == std::vector<int32_t>{0, 0, 2, 2});
  CHECK(c.column_offsets == std::vector<int64_t>{0, 2, 3, 3, 4});
  CHECK(c.by_column == std::vector<int64_t>{0, 2, 3, 1});  // column 0: entries of rows 0, 2
  CHECK(c.row_by_column == std::vector<int32_t>{0, 2, 2, 0});
  CHECK_THROWS_WITH(make_csr(3, 4, {{3, 0}}), Catch::Contains("outside 3 x 4"));
  CHECK_THROWS_WITH(make_csr(3, 4, {{0, -1}}), Catch::Contains("outside 3 x 4"));
  CHECK(make_csr(0, 0, {}).nnz() == 0);
}

TEST_CASE("gradcheck leaky_relu, elu, l2_normalize") {
  Tensor x = random_tensor({3, 7}, 1, 0.1f, 2.f);  // |x| ≥ 0.1: away from the kink
  for (int64_t i = 0; i < x.numel(); i += 2) x.data()[i] = -x.data()[i];
  check_gradients("leaky_relu 0.2", [](const std::vector<Var>& v) { return leaky_relu(v[0], 0.2f); }, {x});
  check_gradients("elu", [](const std::vector<Var>& v) { return elu(v[0]); }, {random_tensor({3, 7}, 2, -3, 3)});
  check_gradients("l2_normalize", [](const std::vector<Var>& v) { return l2_normalize(v[0]); },
                  {random_tensor({2, 3, 5}, 3)});
  const auto y = leaky_relu(Var(Tensor::from_vector({3}, {-2.f, 0.f, 3.f})), 0.2f).value().to_vector();
  CHECK(y == std::vector<float>{-0.4f, 0.f, 3.f});
  const auto z = elu(Var(Tensor::from_vector({2}, {-1.f, 2.f}))).value().to_vector();
  CHECK(z[0] == Approx(std::exp(-1.0) - 1).epsilon(1e-6));
  CHECK(z[1] == 2.f);
  const auto n = l2_normalize(Var(Tensor::from_vector({1, 2}, {3.f, 4.f}))).value().to_vector();
  CHECK(n[0] == Approx(0.6));
  CHECK(n[1] == Approx(0.8));
}

TEST_CASE("gradcheck segment_softmax, segment_sum, per_head_dot") {
  const Csr g = odd_graph();
  const int64_t E = g.nnz();
  check_gradients("segment_softmax", [&](const std::vector<Var>& v) { return segment_softmax(v[0], g); },
                  {random_tensor({E, 3}, 1, -2, 2)});
  check_gradients("segment_sum", [&](const std::vector<Var>& v) { return segment_sum(v[0], g); },
                  {random_tensor({E, 3, 2}, 2)});
  check_gradients("per_head_dot", [](const std::vector<Var>& v) { return per_head_dot(v[0], v[1]); },
                  {random_tensor({5, 3, 4}, 3), random_tensor({3, 4}, 4)});
  // Softmax rows sum to 1 within each node's set; sums add a node's entries.
  const auto a = segment_softmax(Var(random_tensor({E, 2}, 5, -3, 3)), g).value();
  for (int64_t i = 0; i < g.rows; ++i)
    for (int64_t h = 0; h < 2; ++h) {
      double total = 0;
      for (int64_t k = g.offsets[i]; k < g.offsets[i + 1]; ++k) total += a.data()[k * 2 + h];
      CHECK(total == Approx(1.0).epsilon(1e-6));
    }
  const auto sums = segment_sum(Var(Tensor::full({E, 1}, 1.f)), g).value().to_vector();
  CHECK(sums == std::vector<float>{1, 5, 3, 3, 3, 3});  // the degrees, self-loops included
}

TEST_CASE("sparse_multihead_linear: values of a dense product, per-head dropout masks, gradcheck") {
  // 4 rows × 6 features, row 2 empty (a node without features).
  SparseRows x{make_csr(4, 6, {{0, 1}, {0, 4}, {1, 0}, {1, 5}, {3, 2}, {3, 1}, {3, 5}}), {}};
  x.values = {0.5f, -1.f, 2.f, 0.25f, 1.5f, -0.75f, 1.f};
  const int64_t H = 3, F = 2;
  Tensor w = random_tensor({H, 6, F}, 1);
  Rng unused;
  const Tensor y = sparse_multihead_linear(x, Var(w), 0.f, unused).value();
  REQUIRE(y.shape() == Shape{4, H, F});
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t f = 0; f < F; ++f) {
        double expected = 0;
        for (int64_t k = x.pattern.offsets[i]; k < x.pattern.offsets[i + 1]; ++k)
          expected += double(x.values[k]) * w.data()[(h * 6 + x.pattern.column[k]) * F + f];
        CHECK(y.data()[(i * H + h) * F + f] == Approx(expected).margin(1e-6));
      }
  CHECK(unused.counter() == 0);  // no dropout, no draws

  // With dropout every head keeps or drops each non-zero on its own: with all weights 1, some
  // row sums differ between heads.
  Rng rng(7);
  Tensor one_hot = Tensor::full({H, 6, 1}, 1.f);
  const Tensor dropped = sparse_multihead_linear(x, Var(one_hot), 0.5f, rng).value();
  bool heads_differ = false;
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t h = 1; h < H; ++h) heads_differ |= dropped.data()[i * H + h] != dropped.data()[i * H];
  CHECK(heads_differ);

  check_gradients("sparse_multihead_linear",
                  [&](const std::vector<Var>& v) {
                    Rng none;
                    return sparse_multihead_linear(x, v[0], 0.f, none);
                  },
                  {w});
  check_gradients("sparse_multihead_linear dropout 0.4",
                  [&](const std::vector<Var>& v) {
                    Rng fixed(42);  // the same masks at every evaluation
                    return sparse_multihead_linear(x, v[0], 0.4f, fixed);
                  },
                  {w});
}

TEST_CASE("graph_attention: values of its formula on odd graphs, coefficients summing to one") {
  for (const Csr& g : {odd_graph(), one_node()}) {
    const int64_t N = g.rows, H = 3, F = 4;
    const Tensor s = random_tensor({N, H}, 1, -0.1f, 0.1f), t = target_terms(N, H, 2), v = random_tensor({N, H, F}, 3);
    Rng unused;
    Tensor alpha;
    const Tensor out = graph_attention(Var(s), Var(t), Var(v), g, 0.2f, 0.f, unused, &alpha).value();
    const auto expected = attention_by_loops(s, t, v, g, 0.2);
    for (size_t k = 0; k < expected.size(); ++k) CHECK(out.data()[k] == Approx(expected[k]).margin(1e-6));
    REQUIRE(alpha.shape() == Shape{g.nnz(), H});
    for (int64_t i = 0; i < N; ++i)
      for (int64_t h = 0; h < H; ++h) {
        double total = 0;
        for (int64_t k = g.offsets[i]; k < g.offsets[i + 1]; ++k) total += alpha.data()[k * H + h];
        CHECK(total == Approx(1.0).epsilon(1e-6));
      }
    // The isolated node attends to itself only: its output is its own value.
    for (int64_t f = 0; f < H * F; ++f) CHECK(out.data()[f] == Approx(v.data()[f]).margin(1e-6));
  }
}

TEST_CASE("gradcheck graph_attention: several heads, odd graphs, without and with coefficient dropout") {
  for (const auto& [name, g] :
       {std::pair{std::string("odd graph"), odd_graph()}, std::pair{std::string("one node"), one_node()}})
    for (float p : {0.f, 0.5f}) {
      const int64_t N = g.rows, H = 3, F = 2;
      check_gradients("graph_attention " + name + " p=" + std::to_string(p),
                      [&](const std::vector<Var>& v) {
                        Rng fixed(42);
                        return graph_attention(v[0], v[1], v[2], g, 0.2f, p, fixed);
                      },
                      {random_tensor({N, H}, 4, -0.1f, 0.1f), target_terms(N, H, 5), random_tensor({N, H, F}, 6)});
    }
  // Rectangular lists (queries ≠ keys): 2 queries over 3 keys.
  const Csr r = make_csr(2, 3, {{0, 0}, {0, 1}, {1, 0}, {1, 1}, {1, 2}});
  check_gradients("graph_attention rectangular",
                  [&](const std::vector<Var>& v) {
                    Rng none;
                    return graph_attention(v[0], v[1], v[2], r, 0.2f, 0.f, none);
                  },
                  {random_tensor({2, 2}, 7, -0.1f, 0.1f), target_terms(3, 2, 8), random_tensor({3, 2, 3}, 9)});
}
