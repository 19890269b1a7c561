// Our own OpenMP kernels on two threads. ctest runs every test with OMP_NUM_THREADS=1
// (tests/CMakeLists.txt) and most kernels start a parallel region only above a size threshold, so
// the rest of the suite never runs their multi-threaded branches. Here each kernel runs on inputs
// above its threshold once on one thread and once on two, forward and backward (loss Σ out ⊙ w,
// w fixed random, as in check_helpers.hpp), and output and input gradients must be bitwise equal:
// each output row is one thread's, summed in a fixed order. (gru_sequence: see its tolerance.)
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "../two_threads.hpp"
#include "check_helpers.hpp"
#include "tensor/graph_ops.hpp"

using namespace heed;
using heed::test::first_difference;
using heed::test::max_relative_difference;
using heed::test::OpFn;
using heed::test::random_tensor;
using heed::test::ThreadCountGuard;
using heed::test::use_threads;

namespace {

// The thresholds as the kernels define them: a second thread joins above these.
constexpr int64_t kGruGates = 1 << 14;        // gru.cpp kParallelGates: rows · H ≥ this
constexpr int64_t kSegmentWork = 1 << 15;     // segment.cpp kParallelWork: floats > this
constexpr int64_t kGraphAttention = 1 << 15;  // graph_attention.cpp: nnz · H · F > this
constexpr int64_t kSparseLinear = 1 << 16;    // sparse_linear.cpp: nnz · H · F > this
constexpr int64_t kAttention = 65536;         // attention.cpp: B · S · A or B · S · D > this
constexpr int64_t kElementwise = 65536;       // elementwise.cpp, kernels.cpp: elements > this
constexpr int64_t kBiasSums = 65536;          // linalg.cpp bias_grad: rows · cols ≥ this
constexpr int64_t kBiasBlock = 256;           // linalg.cpp bias_grad: columns per parallel iteration

// f on fresh copies of the inputs, then backward of Σ out ⊙ w (the op's backward is seeded with w).
// Returns the output, then each input's gradient (empty when none arrived).
std::vector<std::vector<float>> run_on(int threads, const OpFn& f, const std::vector<Tensor>& inputs) {
  use_threads(threads);
  std::vector<Var> vars;
  for (const auto& t : inputs) vars.emplace_back(t.clone(), true);
  Var out = f(vars);
  backward(sum(mul(out, Var(random_tensor(out.shape(), 99)))));
  REQUIRE(tape_size() == 0);
  std::vector<std::vector<float>> results{out.value().to_vector()};
  for (const auto& v : vars) results.push_back(v.grad().defined() ? v.grad().to_vector() : std::vector<float>());
  return results;
}

// One thread against two, output and every input gradient: bitwise when tolerance is 0, else within it.
void require_thread_independent(const std::string& what, const OpFn& f, const std::vector<Tensor>& inputs,
                                double tolerance = 0) {
  const auto one = run_on(1, f, inputs), two = run_on(2, f, inputs);
  for (size_t i = 0; i < one.size(); ++i) {
    INFO(what << (i == 0 ? std::string(": output") : ": gradient of input " + std::to_string(i - 1)));
    REQUIRE(!one[i].empty());  // a gradient that never arrived would equal another missing one
    REQUIRE(one[i].size() == two[i].size());
    if (tolerance == 0)
      CHECK(first_difference(one[i], two[i]) == -1);
    else
      CHECK(max_relative_difference(one[i], two[i]) <= tolerance);
  }
}

// n nodes, each with its self-loop and 0–4 more neighbours spread over the graph, node 0 a hub
// joined to all others both ways: rows of very different lengths, so the dynamic schedule's
// chunks of 64 rows cost unequally and the threads take rows in no fixed pattern.
Csr spread_graph(int32_t n) {
  std::vector<std::pair<int32_t, int32_t>> entries;
  for (int32_t i = 0; i < n; ++i) {
    entries.push_back({i, i});
    for (int32_t d = 1; d <= i % 5; ++d) entries.push_back({i, (i * 31 + d * 17) % n});
  }
  for (int32_t j = 1; j < n; ++j) entries.insert(entries.end(), {{0, j}, {j, 0}});
  return make_csr(n, n, std::move(entries));
}

// rows × cols sparse features: row i has 1 + i % 7 non-zeros in spread columns, every 50th row none.
SparseRows sparse_features(int32_t rows, int32_t cols) {
  std::vector<std::pair<int32_t, int32_t>> entries;
  for (int32_t i = 0; i < rows; ++i)
    if (i % 50 != 0)
      for (int32_t d = 0; d <= i % 7; ++d) entries.push_back({i, (i * 37 + d * 11) % cols});
  SparseRows x{make_csr(rows, cols, std::move(entries)), {}};
  const Tensor values = random_tensor({x.pattern.nnz()}, 5);
  x.values.assign(values.data(), values.data() + values.numel());
  return x;
}

}  // namespace

TEST_CASE("GRU gates and sequences: the same on one thread and on two") {
  ThreadCountGuard restore;
  const int64_t B = 72, H = 256, T = 3;
  REQUIRE(B * H >= kGruGates);
  require_thread_independent(
      "gru_gates", [](const std::vector<Var>& v) { return gru_gates(v[0], v[1], v[2]); },
      {random_tensor({B, 3 * H}, 1, -2, 2), random_tensor({B, 3 * H}, 2, -2, 2), random_tensor({B, H}, 3)});
  // Every 12th sentence has one token: later steps have 66 active rows, still above the threshold.
  std::vector<int32_t> lengths(B, static_cast<int32_t>(T));
  for (int64_t b = 0; b < B; b += 12) lengths[b] = 1;
  const int64_t fewest_active = std::count(lengths.begin(), lengths.end(), static_cast<int32_t>(T));
  REQUIRE(fewest_active * H >= kGruGates);
  // The recurrent products (gh, dh, dW) run on oneDNN, whose primitives are made per thread count
  // (dnnl_context.cpp) and may block or split their sums differently on two threads: compared to
  // 1e-4 of each tensor's scale (a reordered float sum differs by ~1e-6; a row lost or swapped
  // between threads by O(1)). The gate loops alone are compared bitwise above (gru_gates).
  for (bool reverse : {false, true})
    require_thread_independent(
        std::string("gru_sequence reverse=") + (reverse ? "1" : "0"),
        [&](const std::vector<Var>& v) { return gru_sequence(v[0], v[1], v[2], lengths, reverse); },
        {random_tensor({B, T, 3 * H}, 4), random_tensor({3 * H, H}, 5, -0.0625f, 0.0625f), random_tensor({3 * H}, 6)},
        1e-4);
}

TEST_CASE("segment_softmax, segment_sum, per_head_dot: the same on one thread and on two") {
  ThreadCountGuard restore;
  const Csr g = spread_graph(1000);
  const int64_t E = g.nnz(), H = 16;
  REQUIRE(E * H > kSegmentWork);
  require_thread_independent("segment_softmax", [&](const std::vector<Var>& v) { return segment_softmax(v[0], g); },
                             {random_tensor({E, H}, 1, -2, 2)});
  require_thread_independent("segment_sum", [&](const std::vector<Var>& v) { return segment_sum(v[0], g); },
                             {random_tensor({E, 4, 4}, 2)});
  // More than one block of 1024 rows: w's gradient adds per-block partial sums.
  const int64_t N = 2100, heads = 4, F = 8;
  REQUIRE(N * heads * F > kSegmentWork);
  require_thread_independent("per_head_dot", [](const std::vector<Var>& v) { return per_head_dot(v[0], v[1]); },
                             {random_tensor({N, heads, F}, 3), random_tensor({heads, F}, 4)});
}

TEST_CASE("graph_attention without and with coefficient dropout: the same on one thread and on two") {
  ThreadCountGuard restore;
  const Csr g = spread_graph(1000);
  const int64_t N = g.rows, H = 4, F = 8;  // F = 8: the vectorised head rows of head_rows.hpp
  REQUIRE(g.nnz() * H * F > kGraphAttention);
  for (float p : {0.f, 0.3f})
    require_thread_independent("graph_attention p=" + std::to_string(p),
                               [&](const std::vector<Var>& v) {
                                 Rng fixed(42);  // the same mask on both runs
                                 return graph_attention(v[0], v[1], v[2], g, 0.2f, p, fixed);
                               },
                               {random_tensor({N, H}, 1), random_tensor({N, H}, 2), random_tensor({N, H, F}, 3)});
}

TEST_CASE("sparse_multihead_linear without and with input dropout: the same on one thread and on two") {
  ThreadCountGuard restore;
  const SparseRows x = sparse_features(1000, 300);  // backward: 300 columns, several chunks of 64
  const int64_t H = 4, F = 8;
  REQUIRE(x.pattern.nnz() * H * F > kSparseLinear);
  for (float p : {0.f, 0.4f})
    require_thread_independent("sparse_multihead_linear p=" + std::to_string(p),
                               [&](const std::vector<Var>& v) {
                                 Rng fixed(42);
                                 return sparse_multihead_linear(x, v[0], p, fixed);
                               },
                               {random_tensor({H, x.pattern.cols, F}, 1)});
}

TEST_CASE("cross_entropy: loss, statistics and gradient the same on one thread and on two") {
  ThreadCountGuard restore;
  // loss.cpp: the row loop is `omp parallel for` at every size (no threshold): any two rows split.
  const int64_t rows = 300, vocab = 400;
  REQUIRE(rows >= 2);
  std::vector<int32_t> targets(rows);
  for (int64_t r = 0; r < rows; ++r) targets[r] = r % 11 == 0 ? -100 : static_cast<int32_t>((r * 37) % vocab);
  const Tensor logits = random_tensor({rows, vocab}, 1, -3, 3);
  auto run = [&](int threads, CrossEntropyStats& stats) {
    use_threads(threads);
    Var x(logits.clone(), true);
    Var loss = cross_entropy(x, targets, -100, 0.1f, 250.f, &stats);
    backward(loss);  // seeded with 1: the gradient written by the forward loop is passed on as it is
    std::vector<float> gradient_then_loss = x.grad().to_vector();
    gradient_then_loss.push_back(loss.value().item());
    return gradient_then_loss;
  };
  CrossEntropyStats stats_one, stats_two;
  const std::vector<float> one = run(1, stats_one), two = run(2, stats_two);
  REQUIRE(one.size() == static_cast<size_t>(rows * vocab + 1));
  CHECK(first_difference(one, two) == -1);
  CHECK(stats_one.nll_sum == stats_two.nll_sum);  // per-row sums added in row order: exactly equal
  CHECK(stats_one.loss_sum == stats_two.loss_sum);
  CHECK(stats_one.labels == stats_two.labels);
}

TEST_CASE("additive attention scores and contexts, masked positions included: the same on one thread and on two") {
  ThreadCountGuard restore;
  const int64_t B = 16, S = 40, A = 128, D = 130;  // D: two column blocks of 64 and a tail
  REQUIRE(B * S * A > kAttention);
  REQUIRE(B * S * D > kAttention);
  // Sentence b has S − 4·(b % 5) real positions: masked ones are skipped, so rows cost unequally.
  Tensor pad = Tensor::zeros({B, S}), alpha = random_tensor({B, S}, 1, 0.f, 1.f);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = S - 4 * (b % 5); j < S; ++j) {
      pad.data()[b * S + j] = 1.f;
      alpha.data()[b * S + j] = 0.f;
    }
  // Masked scores are −inf (so the loss is not finite); the gradients skip them and stay finite.
  require_thread_independent(
      "additive_attention_scores",
      [&](const std::vector<Var>& v) { return additive_attention_scores(v[0], v[1], v[2], pad); },
      {random_tensor({B, A}, 2), random_tensor({B, S, A}, 3), random_tensor({1, A}, 4)});
  require_thread_independent("attention_context",
                             [](const std::vector<Var>& v) { return attention_context(v[0], v[1]); },
                             {alpha, random_tensor({B, S, D}, 5)});
}

TEST_CASE("elementwise ops and gradient sums above their size: the same on one thread and on two") {
  ThreadCountGuard restore;
  // Forward: mul broadcast over rows, add, scale. Backward: scale, add_into (x is used twice).
  const int64_t rows = 300, cols = 300;
  REQUIRE(rows * cols > kElementwise);
  require_thread_independent("scale(mul(x, row) + x)",
                             [](const std::vector<Var>& v) { return scale(add(mul(v[0], v[1]), v[0]), 1.5f); },
                             {random_tensor({rows, cols}, 1), random_tensor({cols}, 2)});
}

TEST_CASE("linear's bias gradient (column sums): the same on one thread and on two") {
  ThreadCountGuard restore;
  // Only the bias takes a gradient: the product and the other gradients are oneDNN's, not this loop's.
  const int64_t rows = 128, in = 32, out = 600;
  REQUIRE(rows * out >= kBiasSums);
  REQUIRE(out > 2 * kBiasBlock);  // three column blocks: both threads get one
  const Tensor x = random_tensor({rows, in}, 1), w = random_tensor({out, in}, 2), b = random_tensor({out}, 3);
  const Tensor loss_weights = random_tensor({rows, out}, 4);
  auto bias_gradient = [&](int threads) {
    use_threads(threads);
    Var bias(b.clone(), true);
    backward(sum(mul(linear(Var(x), Var(w), bias), Var(loss_weights))));
    return bias.grad().to_vector();
  };
  const std::vector<float> one = bias_gradient(1), two = bias_gradient(2);
  REQUIRE(!one.empty());
  CHECK(first_difference(one, two) == -1);
}
