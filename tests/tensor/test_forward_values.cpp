// Forward values of every op against independent references: naive loops and the plain formulas,
// computed in double. Tolerances are relative to the reference's magnitude: 1e-5 for matmuls
// (float32 accumulation over K ≤ 13 terms), 2e-6·|x| scale for the transcendental kernels.
#include <omp.h>

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "check_helpers.hpp"
#include "tensor/dnnl_context.hpp"
#include "tensor/fast_math.hpp"

using namespace heed;
using heed::test::random_tensor;

namespace {
double sigmoid_ref(double x) { return 1.0 / (1.0 + std::exp(-x)); }

void require_close(const Tensor& got, const std::vector<double>& want, double tol, const char* what) {
  REQUIRE(got.numel() == static_cast<int64_t>(want.size()));
  Tensor g = got.contiguous();
  for (size_t i = 0; i < want.size(); ++i) {
    INFO(what << " element " << i << ": got " << g.data()[i] << " want " << want[i]);
    REQUIRE(std::fabs(g.data()[i] - want[i]) <= tol * std::max(1.0, std::fabs(want[i])));
  }
}

void require_close(const Tensor& got, const Tensor& want, double tol, const char* what) {
  const Tensor w = want.contiguous();
  require_close(got, std::vector<double>(w.data(), w.data() + w.numel()), tol, what);
}

// Element (i, j) of op(X) for a 2-D [r, c] block starting at p.
double at(const float* p, int64_t cols, bool trans, int64_t i, int64_t j) {
  return trans ? p[j * cols + i] : p[i * cols + j];
}

// Naive op(A)·op(B); A, B may be 2-D or 3-D (B 2-D is shared by the batch).
std::vector<double> naive_matmul(const Tensor& a, const Tensor& b, bool ta, bool tb) {
  const int64_t batch = a.ndim() == 3 ? a.dim(0) : 1;
  const int64_t m = ta ? a.dim(-1) : a.dim(-2), k = ta ? a.dim(-2) : a.dim(-1), n = tb ? b.dim(-2) : b.dim(-1);
  std::vector<double> c(batch * m * n, 0.0);
  for (int64_t s = 0; s < batch; ++s) {
    const float* pa = a.data() + s * m * k;
    const float* pb = b.data() + (b.ndim() == 3 ? s * k * n : 0);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t q = 0; q < k; ++q)
          c[(s * m + i) * n + j] += at(pa, a.dim(-1), ta, i, q) * at(pb, b.dim(-1), tb, q, j);
  }
  return c;
}
}  // namespace

TEST_CASE("matmul matches naive loops for all transposes, batched and shared-B, with accumulate") {
  const int64_t M = 3, K = 13, N = 7, B = 2;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      Shape a2 = ta ? Shape{K, M} : Shape{M, K}, b2 = tb ? Shape{N, K} : Shape{K, N};
      Shape a3 = {B, a2[0], a2[1]}, b3 = {B, b2[0], b2[1]};
      const std::pair<Shape, Shape> cases[] = {{a2, b2}, {a3, b3}, {a3, b2}};
      for (const auto& [sa, sb] : cases) {
        Tensor a = random_tensor(sa, 1), b = random_tensor(sb, 2);
        Var c = matmul(Var(a), Var(b), ta, tb);
        require_close(c.value(), naive_matmul(a, b, ta, tb), 1e-5, "matmul");
        // accumulate: C += op(A)·op(B) on top of existing values
        Tensor acc = c.value().clone();
        matmul_into(acc, a, b, ta, tb, true);
        auto twice = naive_matmul(a, b, ta, tb);
        for (auto& x : twice) x *= 2;
        require_close(acc, twice, 1e-5, "matmul_into accumulate");
      }
    }
  // A transposed *view* as input is read correctly (made dense first).
  Tensor a = random_tensor({5, 3}, 3), b = random_tensor({5, 2}, 4);
  require_close(matmul(Var(a.transpose(0, 1)), Var(b)).value(), naive_matmul(a, b, true, false), 1e-5, "view");
  CHECK_THROWS(matmul(Var(random_tensor({3, 4}, 1)), Var(random_tensor({5, 2}, 2))));
}

TEST_CASE("2-D matmuls of any shape share one primitive per layout") {
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      auto product = [&](int64_t M, int64_t K, int64_t N, uint64_t seed) {
        Tensor a = random_tensor(ta ? Shape{K, M} : Shape{M, K}, seed);
        Tensor b = random_tensor(tb ? Shape{N, K} : Shape{K, N}, seed + 1);
        Tensor c = Tensor::empty({M, N});
        matmul_into(c, a, b, ta, tb);
        require_close(c, naive_matmul(a, b, ta, tb), 1e-5, "runtime-sized matmul");
      };
      product(3, 5, 7, 1);  // creates this layout's primitive
      const size_t misses = dnnl_ctx::primitive_misses();
      product(1999, 17, 9, 3);
      product(4, 300, 2, 5);
      product(1, 1, 1, 7);
      INFO("ta " << ta << " tb " << tb);
      CHECK(dnnl_ctx::primitive_misses() == misses);
    }
}

TEST_CASE("weight-gradient products (A read transposed) over many rows: fixed chunks, one primitive per shape") {
  const int64_t M = 24, N = 40;
  auto product = [&](int64_t K, bool accumulate, uint64_t seed) {
    Tensor a = random_tensor({K, M}, seed), b = random_tensor({K, N}, seed + 1);
    Tensor c = random_tensor({M, N}, seed + 2);
    auto want = naive_matmul(a, b, true, false);
    if (accumulate)
      for (int64_t i = 0; i < M * N; ++i) want[i] += c.data()[i];
    matmul_into(c, a, b, true, false, accumulate);
    INFO(K << " rows, accumulate " << accumulate);
    require_close(c, want, 1e-4, "chunked dW = gᵀ·x");
  };
  product(1061, false, 1);  // two whole chunks and a remainder; creates the chunk primitives
  product(1061, true, 4);
  const size_t misses = dnnl_ctx::primitive_misses();
  product(1024, false, 7);  // whole chunks only
  product(1500, true, 10);
  product(512, true, 13);
  CHECK(dnnl_ctx::primitive_misses() == misses);
}

TEST_CASE("x·Wᵀ with a long reduction over many rows: fixed row chunks, one primitive per shape") {
  const int64_t K = 1030, N = 24;  // K at least the long-reduction bound (1024)
  Tensor w = random_tensor({N, K}, 1), bias = random_tensor({N}, 2);
  auto product = [&](int64_t M, bool with_bias, bool accumulate, uint64_t seed) {
    Tensor x = random_tensor({M, K}, seed);
    std::vector<double> want = naive_matmul(x, w, false, true);
    Tensor c = random_tensor({M, N}, seed + 1);
    if (with_bias) {
      for (int64_t i = 0; i < M * N; ++i) want[i] += bias.data()[i % N];
      c = linear(Var(x), Var(w), Var(bias)).value();
    } else {
      if (accumulate)
        for (int64_t i = 0; i < M * N; ++i) want[i] += c.data()[i];
      matmul_into(c, x, w, false, true, accumulate);
    }
    INFO(M << " rows, bias " << with_bias << ", accumulate " << accumulate);
    require_close(c, want, 1e-4, "row-chunked x·Wᵀ");
  };
  product(1061, false, false, 3);  // two whole chunks and a remainder; creates the chunk primitives
  product(1061, false, true, 5);
  product(1061, true, false, 7);
  const size_t misses = dnnl_ctx::primitive_misses();
  product(1024, false, false, 9);  // whole chunks only
  product(1500, false, true, 11);
  product(512, true, false, 13);
  product(700, true, false, 15);
  CHECK(dnnl_ctx::primitive_misses() == misses);
}

TEST_CASE("x·Wᵀ + b with a wide output over many rows: fixed row chunks, one primitive per shape") {
  const int64_t K = 8, N = 4100;  // N at least the wide-output bound (4096), as a vocabulary projection
  Tensor w = random_tensor({N, K}, 1), bias = random_tensor({N}, 2);
  auto product = [&](int64_t M, uint64_t seed) {
    Tensor x = random_tensor({M, K}, seed);
    std::vector<double> want = naive_matmul(x, w, false, true);
    for (int64_t i = 0; i < M * N; ++i) want[i] += bias.data()[i % N];
    INFO(M << " rows");
    require_close(linear(Var(x), Var(w), Var(bias)).value(), want, 1e-4, "row-chunked x·Wᵀ + b");
  };
  product(1061, 3);  // two whole chunks and a remainder; creates the chunk primitive
  const size_t misses = dnnl_ctx::primitive_misses();
  product(1024, 5);  // whole chunks only
  product(700, 7);
  CHECK(dnnl_ctx::primitive_misses() == misses);
}

TEST_CASE("the bias gradient of a wide output (in wider column blocks) is the column sums of dy") {
  const int64_t M = 20, K = 3, N = 4100;  // N at least the wide-output bound (4096)
  Var x(random_tensor({M, K}, 1)), w(random_tensor({N, K}, 2)), bias(random_tensor({N}, 3), true);
  Tensor dy = random_tensor({M, N}, 4);
  backward(sum(mul(linear(x, w, bias), Var(dy))));
  std::vector<double> want(N, 0.0);
  for (int64_t r = 0; r < M; ++r)
    for (int64_t j = 0; j < N; ++j) want[j] += dy.data()[r * N + j];
  require_close(bias.grad(), want, 1e-5, "wide bias gradient");
}

TEST_CASE("linear matches x·wᵀ + b") {
  Tensor x = random_tensor({2, 3, 5}, 1), w = random_tensor({7, 5}, 2), bias = random_tensor({7}, 3);
  auto want = naive_matmul(x.reshape({6, 5}), w, false, true);
  for (int64_t r = 0; r < 6; ++r)
    for (int64_t o = 0; o < 7; ++o) want[r * 7 + o] += bias.data()[o];
  Var y = linear(Var(x), Var(w), Var(bias));
  REQUIRE(y.shape() == Shape{2, 3, 7});
  require_close(y.value(), want, 1e-5, "linear");
}

TEST_CASE("linear with a packed weight matches x·wᵀ + b, the weight dense or a transposed view") {
  for (int64_t rows : {1, 6, 16, 32, 45, 300, 529}) {  // 529 = 2·256 + 16 + 1: every kind of row piece
    INFO(rows << " rows");
    Tensor x = random_tensor({rows, 20}, 4), w = random_tensor({36, 20}, 5), wt = random_tensor({20, 36}, 6);
    Tensor bias = random_tensor({36}, 7);
    auto want = naive_matmul(x, w, false, true);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t o = 0; o < 36; ++o) want[r * 36 + o] += bias.data()[o];
    require_close(linear(x, pack_weight(w), bias), want, 1e-5, "dense weight");
    // wt viewed as [36, 20] without a copy: the packing reads its strides
    const Tensor view = wt.transpose(0, 1);
    REQUIRE(!view.is_contiguous());
    Tensor y = Tensor::full({rows, 36}, 1.f);
    linear_into(y, x, pack_weight(view), Tensor(), true);
    auto want_view = naive_matmul(x, wt, false, false);
    for (auto& v : want_view) v += 1.0;
    require_close(y, want_view, 1e-5, "transposed view, accumulated");
  }
}

TEST_CASE("decoding's products and activations use a bounded set of primitives, with the same values") {
  // Without gradients, every row count (products on packed weights) and element count
  // (activations) goes through primitives of a bounded set of sizes: a server sees them all.
  const PackedWeight w = pack_weight(random_tensor({24, 20}, 8));
  const Tensor bias = random_tensor({24}, 9), gamma = random_tensor({24}, 10), beta = random_tensor({24}, 11);
  const size_t before = dnnl_ctx::cached_primitives();
  for (int64_t rows = 1; rows <= 600; ++rows) {
    const Tensor x = random_tensor({rows, 20}, 10 + rows);
    Tensor y, h, sm, lsm, ln;
    {
      NoGradGuard no_grad;
      y = linear(x, w, bias);
      h = tanh(Var(y)).value();
      sm = softmax(Var(y)).value();
      lsm = log_softmax(Var(y)).value();
      ln = layer_norm(Var(y), Var(gamma), Var(beta), 1e-5f).value();
    }
    if (rows % 37 == 0) {  // the values: the plain product, and tanh with a gradient (the exact-size primitive)
      INFO(rows << " rows");
      auto want = naive_matmul(x, w.plain, false, true);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t o = 0; o < 24; ++o) want[r * 24 + o] += bias.data()[o];
      require_close(y, want, 1e-5, "packed product in row pieces");
      const Var y_grad(y.clone(), true);
      const Tensor exact = tanh(y_grad).value();
      for (int64_t i = 0; i < h.numel(); ++i) REQUIRE(h.data()[i] == exact.data()[i]);
      require_close(sm, softmax(y_grad).value(), 1e-7, "softmax in row pieces");
      require_close(lsm, log_softmax(y_grad).value(), 1e-6, "log-softmax in row pieces");
      require_close(ln, layer_norm(y_grad, Var(gamma), Var(beta), 1e-5f).value(), 1e-6, "layer norm in row pieces");
      clear_tape();
    }
  }
  // 600 row counts: at most 31 products (and the plain fallback's few, on a CPU without packing),
  // 15 tanh sizes (24·600 = 14,400 elements < 2^14) and 3 × 31 row-piece normalisations, plus
  // the 4 × 16 exact ones checked above.
  CHECK(dnnl_ctx::cached_primitives() - before <= 31 + 4 + 15 + 3 * 31 + 4 * 16);
}

TEST_CASE("elementwise ops and activations match their formulas") {
  Tensor a = random_tensor({2, 3, 5}, 1, -4, 4), b = random_tensor({3, 1}, 2);
  std::vector<double> add_ref, mul_ref, tanh_ref, sig_ref, relu_ref, gelu_ref;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.data()[i], y = b.data()[(i / 5) % 3];
    add_ref.push_back(x + y);
    mul_ref.push_back(x * y);
    tanh_ref.push_back(std::tanh(x));
    sig_ref.push_back(sigmoid_ref(x));
    relu_ref.push_back(x > 0 ? x : 0);
    gelu_ref.push_back(0.5 * x * (1 + std::erf(x / std::sqrt(2.0))));
  }
  require_close(add(Var(a), Var(b)).value(), add_ref, 1e-6, "add");
  require_close(mul(Var(a), Var(b)).value(), mul_ref, 1e-6, "mul");
  require_close(tanh(Var(a)).value(), tanh_ref, 2e-6, "tanh");
  require_close(sigmoid(Var(a)).value(), sig_ref, 2e-6, "sigmoid");
  require_close(relu(Var(a)).value(), relu_ref, 0, "relu");
  require_close(gelu(Var(a)).value(), gelu_ref, 2e-6, "gelu");
}

TEST_CASE("softmax, log_softmax and layer_norm match their formulas") {
  const int64_t R = 3, C = 11;
  Tensor x = random_tensor({R, C}, 1, -5, 5), gamma = random_tensor({C}, 2), beta = random_tensor({C}, 3);
  std::vector<double> sm, lsm, ln;
  for (int64_t r = 0; r < R; ++r) {
    const float* p = x.data() + r * C;
    double mx = p[0], se = 0, mean = 0, var = 0;
    for (int64_t k = 0; k < C; ++k) mx = std::max(mx, double(p[k]));
    for (int64_t k = 0; k < C; ++k) se += std::exp(p[k] - mx);
    for (int64_t k = 0; k < C; ++k) mean += p[k] / double(C);
    for (int64_t k = 0; k < C; ++k) var += (p[k] - mean) * (p[k] - mean) / C;
    for (int64_t k = 0; k < C; ++k) {
      sm.push_back(std::exp(p[k] - mx) / se);
      lsm.push_back(p[k] - mx - std::log(se));
      ln.push_back((p[k] - mean) / std::sqrt(var + 1e-5) * gamma.data()[k] + beta.data()[k]);
    }
  }
  require_close(softmax(Var(x)).value(), sm, 2e-6, "softmax");
  require_close(log_softmax(Var(x)).value(), lsm, 2e-6, "log_softmax");
  require_close(layer_norm(Var(x), Var(gamma), Var(beta)).value(), ln, 1e-5, "layer_norm");
  // A different eps is a different primitive (the cache key must distinguish tiny eps values).
  Tensor flat = Tensor::full({1, 4}, 0.f);
  flat.data()[0] = 1e-4f;
  const float y7 = layer_norm(Var(flat), Var(Tensor::full({4}, 1.f)), Var(Tensor::zeros({4})), 1e-7f).value().data()[0];
  const float y8 = layer_norm(Var(flat), Var(Tensor::full({4}, 1.f)), Var(Tensor::zeros({4})), 1e-8f).value().data()[0];
  const double mean = 0.25e-4, var = (7.5e-5 * 7.5e-5 + 3 * 2.5e-5 * 2.5e-5) / 4;  // population variance
  CHECK(y7 == Approx((1e-4 - mean) / std::sqrt(var + 1e-7)).epsilon(1e-4));
  CHECK(y8 == Approx((1e-4 - mean) / std::sqrt(var + 1e-8)).epsilon(1e-4));
}

TEST_CASE("cross_entropy with label smoothing and ignore_index matches the direct formula") {
  const int64_t N = 5, V = 7;
  const float eps = 0.1f;
  Tensor logits = random_tensor({N, V}, 1, -6, 6);
  logits.data()[2 * V + 1] = 60.f;  // a large logit: the log-sum-exp must stay finite
  const std::vector<int32_t> targets = {3, -100, 0, 6, 1};
  double loss = 0, nll = 0;
  int64_t labels = 0;
  for (int64_t r = 0; r < N; ++r) {
    if (targets[r] == -100) continue;
    const float* p = logits.data() + r * V;
    double mx = p[0], se = 0;
    for (int64_t k = 0; k < V; ++k) mx = std::max(mx, double(p[k]));
    for (int64_t k = 0; k < V; ++k) se += std::exp(p[k] - mx);
    const double lse = mx + std::log(se);
    double smooth = 0;
    for (int64_t k = 0; k < V; ++k) smooth += (lse - p[k]) / V;
    const double row_nll = lse - p[targets[r]];
    nll += row_nll;
    loss += (1 - eps) * row_nll + eps * smooth;
    ++labels;
  }
  CrossEntropyStats stats;
  Var out = cross_entropy(Var(logits), targets, -100, eps, 4.f, &stats);
  CHECK(labels == 4);
  CHECK(stats.labels == 4);
  CHECK(stats.nll_sum == Approx(nll).epsilon(1e-6));
  CHECK(stats.loss_sum == Approx(loss).epsilon(1e-6));
  CHECK(out.value().item() == Approx(loss / 4).epsilon(1e-6));
  CHECK_THROWS(cross_entropy(Var(logits), {3, 7, 0, 0, 0}, -100, 0.f, 1.f));
}

TEST_CASE("fast_exp, fast_sigmoid and fast_tanh are accurate and propagate NaN") {
  double worst_exp = 0, worst_tanh = 0, worst_sig = 0;
  for (int i = -80000; i <= 80000; ++i) {
    const float x = i * 1e-3f;  // [-80, 80]
    worst_exp = std::max(worst_exp, std::fabs(fast_exp(x) - std::exp(double(x))) / std::exp(double(x)));
    const double t = std::tanh(double(x));
    worst_tanh = std::max(worst_tanh, std::fabs(fast_tanh(x) - t) / std::max(std::fabs(t), 1e-30));
    worst_sig = std::max(worst_sig, std::fabs(fast_sigmoid(x) - sigmoid_ref(x)) / sigmoid_ref(x));
  }
  std::printf("fast_math max relative error: exp %.2e sigmoid %.2e tanh %.2e\n", worst_exp, worst_sig, worst_tanh);
  CHECK(worst_exp < 5e-7);
  CHECK(worst_sig < 1e-6);
  CHECK(worst_tanh < 2e-6);
  CHECK(fast_tanh(0.f) == 0.f);
  CHECK(fast_exp(-200.f) < 1e-37f);
  CHECK(std::isnan(fast_exp(NAN)));
  CHECK(std::isnan(fast_tanh(NAN)));
}

namespace {
// h' for one row, the GRU equations written out (linear-before-reset, gate order r, z, n).
std::vector<double> gru_step_ref(const float* gi, const std::vector<double>& h, const Tensor& w, const Tensor& bh) {
  const int64_t H = static_cast<int64_t>(h.size());
  std::vector<double> gh(3 * H);
  for (int64_t o = 0; o < 3 * H; ++o) {
    gh[o] = bh.data()[o];
    for (int64_t j = 0; j < H; ++j) gh[o] += double(w.data()[o * H + j]) * h[j];
  }
  std::vector<double> out(H);
  for (int64_t j = 0; j < H; ++j) {
    const double r = sigmoid_ref(gi[j] + gh[j]), z = sigmoid_ref(gi[H + j] + gh[H + j]);
    const double n = std::tanh(gi[2 * H + j] + r * gh[2 * H + j]);
    out[j] = (1 - z) * n + z * h[j];
  }
  return out;
}
}  // namespace

TEST_CASE("gru_cell matches the GRU equations") {
  const int64_t B = 3, H = 5;
  Tensor gi = random_tensor({B, 3 * H}, 1, -2, 2), h = random_tensor({B, H}, 2), w = random_tensor({3 * H, H}, 3),
         bh = random_tensor({3 * H}, 4);
  std::vector<double> want;
  for (int64_t b = 0; b < B; ++b) {
    auto row =
        gru_step_ref(gi.data() + b * 3 * H, std::vector<double>(h.data() + b * H, h.data() + (b + 1) * H), w, bh);
    want.insert(want.end(), row.begin(), row.end());
  }
  require_close(gru_cell(Var(gi), Var(h), Var(w), Var(bh)).value(), want, 2e-6, "gru_cell");
}

TEST_CASE("gru_sequence matches per-sentence loops in both directions with ragged lengths") {
  const int64_t T = 5, H = 3;
  // Four rows, and nineteen: more than one block of rows, so that some steps multiply only the
  // prefix of rows still inside their sentences.
  for (const std::vector<int32_t>& lengths :
       {std::vector<int32_t>{5, 2, 0, 4},
        std::vector<int32_t>{1, 5, 3, 0, 2, 5, 4, 1, 1, 2, 3, 5, 0, 4, 2, 2, 1, 3, 1}}) {
    const int64_t B = static_cast<int64_t>(lengths.size());
    Tensor gi = random_tensor({B, T, 3 * H}, 1, -2, 2), w = random_tensor({3 * H, H}, 2),
           bh = random_tensor({3 * H}, 3);
    for (bool reverse : {false, true}) {
      std::vector<double> want(B * T * H, 0.0);  // padded positions stay zero
      for (int64_t b = 0; b < B; ++b) {
        std::vector<double> h(H, 0.0);
        for (int64_t s = 0; s < lengths[b]; ++s) {
          const int64_t t = reverse ? lengths[b] - 1 - s : s;  // reverse starts at the sentence's last token
          h = gru_step_ref(gi.data() + (b * T + t) * 3 * H, h, w, bh);
          for (int64_t j = 0; j < H; ++j) want[(b * T + t) * H + j] = h[j];
        }
      }
      // The same input packed: the real positions only, sentence after sentence.
      std::vector<float> packed;
      for (int64_t b = 0; b < B; ++b)
        packed.insert(packed.end(), gi.data() + b * T * 3 * H, gi.data() + (b * T + lengths[b]) * 3 * H);
      Tensor gi_packed = Tensor::from_vector({static_cast<int64_t>(packed.size()) / (3 * H), 3 * H}, packed);
      // With and without a gradient: the kept gate values are laid out differently.
      for (bool grad : {false, true}) {
        const std::string name = "gru_sequence B=" + std::to_string(B) + (reverse ? " reverse" : " forward");
        Var giv(gi.clone(), grad);
        require_close(gru_sequence(giv, Var(w), Var(bh), lengths, reverse).value(), want, 5e-6, name.c_str());
        Var packed_v(gi_packed.clone(), grad);
        require_close(gru_sequence(packed_v, Var(w), Var(bh), lengths, reverse, nullptr, T).value(), want, 5e-6,
                      (name + " packed").c_str());
      }
    }
  }
  Tensor gi = random_tensor({4, T, 3 * H}, 1, -2, 2), w = random_tensor({3 * H, H}, 2), bh = random_tensor({3 * H}, 3);
  CHECK_THROWS(gru_sequence(Var(gi), Var(w), Var(bh), {5, 6, 0, 1}, false));
  CHECK_THROWS_WITH(gru_sequence(Var(random_tensor({9, 3 * H}, 4)), Var(w), Var(bh), {5, 2, 0, 1}, false, nullptr, T),
                    Catch::Contains("packed input of 9 rows for 8 positions"));
}

TEST_CASE("additive_attention_scores matches loops") {
  const int64_t B = 2, S = 3, A = 7;
  Tensor q = random_tensor({B, A}, 1), k = random_tensor({B, S, A}, 2), v = random_tensor({1, A}, 3);
  std::vector<double> want;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 0; j < S; ++j) {
      double e = 0;
      for (int64_t a = 0; a < A; ++a)
        e += v.data()[a] * std::tanh(double(q.data()[b * A + a]) + k.data()[(b * S + j) * A + a]);
      want.push_back(e);
    }
  require_close(additive_attention_scores(Var(q), Var(k), Var(v)).value(), want, 5e-6, "attention scores");
  // Masked positions are −inf, the others unchanged.
  Tensor mask = Tensor::zeros({B, S});
  mask.data()[2] = mask.data()[4] = mask.data()[5] = 1.f;
  const Tensor masked = additive_attention_scores(Var(q), Var(k), Var(v), mask).value();
  for (int64_t i = 0; i < B * S; ++i) {
    INFO("position " << i);
    if (mask.data()[i] != 0.f)
      CHECK(masked.data()[i] == -std::numeric_limits<float>::infinity());
    else
      CHECK(std::abs(masked.data()[i] - want[i]) < 5e-6);
  }
}

TEST_CASE("max_of: every position can hold the maximum; NaN passed over") {
  for (int64_t n : {1, 63, 64, 65, 200}) {
    std::vector<float> x(n);
    for (int64_t i = 0; i < n; ++i) x[i] = -1000.f + float((i * 37) % 101);
    for (int64_t at = 0; at < n; ++at) {
      std::vector<float> y = x;
      y[at] = 5.f;
      y[(at + 1) % n] = n > 1 ? std::nanf("") : y[at];
      REQUIRE(heed::max_of(y.data(), n) == 5.f);
    }
  }
  CHECK(heed::max_of(nullptr, 0) == -INFINITY);
}

TEST_CASE("attention_context matches loops") {
  const int64_t B = 3, S = 4, D = 130;  // D: two register blocks and a remainder
  Tensor alpha = random_tensor({B, S}, 1), h = random_tensor({B, S, D}, 2);
  alpha.data()[S - 1] = 0.f;
  std::vector<double> want;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < D; ++i) {
      double c = 0;
      for (int64_t j = 0; j < S; ++j) c += double(alpha.data()[b * S + j]) * h.data()[(b * S + j) * D + i];
      want.push_back(c);
    }
  require_close(attention_context(Var(alpha), Var(h)).value(), want, 5e-6, "attention context");
  CHECK_THROWS_WITH(attention_context(Var(random_tensor({B, S + 1}, 3)), Var(h)), Catch::Contains("attention context"));
}

TEST_CASE("shape ops, embedding, masked_fill and reductions move the right values") {
  Tensor x = Tensor::from_vector({2, 3}, {0, 1, 2, 3, 4, 5});
  CHECK(permute(Var(x), {1, 0}).value().to_vector() == std::vector<float>{0, 3, 1, 4, 2, 5});
  CHECK(concat({Var(x), Var(x.slice(1, 2))}, 0).value().to_vector() == std::vector<float>{0, 1, 2, 3, 4, 5, 3, 4, 5});
  CHECK(concat({Var(x), Var(x)}, 1).value().to_vector() == std::vector<float>{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5});
  auto parts = split(Var(x), {2, 1}, 1);
  CHECK(parts[0].value().to_vector() == std::vector<float>{0, 1, 3, 4});
  CHECK(parts[1].value().to_vector() == std::vector<float>{2, 5});
  CHECK(slice_rows(Var(x), 1, 2).value().to_vector() == std::vector<float>{3, 4, 5});
  Var e = embedding(Var(x), {1, 0, 1}, {3});
  CHECK(e.shape() == Shape{3, 3});
  CHECK(e.value().to_vector() == std::vector<float>{3, 4, 5, 0, 1, 2, 3, 4, 5});
  CHECK_THROWS(embedding(Var(x), {2}, {1}));
  Tensor mask = Tensor::from_vector({1, 3}, {0, 1, 0});
  CHECK(masked_fill(Var(x), mask, -9).value().to_vector() == std::vector<float>{0, -9, 2, 3, -9, 5});
  CHECK(sum(Var(x)).value().item() == 15.f);
  CHECK(mean(Var(x)).value().item() == 2.5f);
}

TEST_CASE("ill-shaped inputs are an error, never a write out of bounds or a division by zero") {
  Tensor x = Tensor::from_vector({2, 3}, {0, 1, 2, 3, 4, 5});
  // a part with fewer axes than the concat axis (its size there was once written before the check)
  CHECK_THROWS_WITH(concat({Var(x), Var(Tensor::zeros({4}))}, 1), Catch::Contains("concat: shapes"));
  CHECK_THROWS_WITH(concat({Var(Tensor::zeros({4})), Var(x)}, 0), Catch::Contains("concat: shapes"));
  // an empty last axis: no rows to normalise over
  const Var empty(Tensor::zeros({2, 0}), true);
  CHECK_THROWS_WITH(softmax(empty), Catch::Contains("empty last axis"));
  CHECK_THROWS_WITH(log_softmax(empty), Catch::Contains("empty last axis"));
  CHECK_THROWS_WITH(layer_norm(empty, Var(Tensor::zeros({0})), Var(Tensor::zeros({0})), 1e-5f),
                    Catch::Contains("empty last axis"));
  CHECK_THROWS_WITH(cross_entropy(empty, {0, 0}, -100, 0.f, 1.f), Catch::Contains("empty vocabulary"));
  // sizes below -1 (the product of {-2, -2} is the 4 of a [2, 2] tensor)
  const Tensor four = Tensor::zeros({2, 2});
  CHECK_THROWS_WITH(four.reshape({-2, -2}), Catch::Contains("negative size"));
  CHECK_THROWS_WITH(Tensor::zeros({8}).reshape({-1, -4}), Catch::Contains("negative size"));
  CHECK(four.reshape({-1}).shape() == Shape{4});
}

TEST_CASE("a strided view copies into the dense layout it views, on one thread or two") {
  const Tensor t = random_tensor({6, 50, 7, 40}, 21);  // 84,000 elements: above the parallel size
  // Axes 1 and 2 swapped keeps whole rows of the last axis (copied as rows); 1 and 3 does not.
  const int64_t size[4] = {6, 50, 7, 40};
  const int threads_before = omp_get_max_threads();
  for (const auto& [p, q] : {std::pair<int, int>{1, 2}, std::pair<int, int>{1, 3}}) {
    const Tensor view = t.transpose(p, q);
    for (int threads : {1, 2}) {
      omp_set_num_threads(threads);
      const Tensor dense = view.contiguous();
      REQUIRE(dense.is_contiguous());
      bool all_equal = true;
      int64_t i[4], n = 0;  // i: index into t; the view's index is i with p and q swapped
      for (i[0] = 0; i[0] < size[0]; ++i[0])
        for (i[1] = 0; i[1] < size[1]; ++i[1])
          for (i[2] = 0; i[2] < size[2]; ++i[2])
            for (i[3] = 0; i[3] < size[3]; ++i[3], ++n) {
              int64_t j[4] = {i[0], i[1], i[2], i[3]};
              std::swap(j[p], j[q]);
              int64_t dims[4] = {size[0], size[1], size[2], size[3]};
              std::swap(dims[p], dims[q]);
              const int64_t at = ((j[0] * dims[1] + j[1]) * dims[2] + j[2]) * dims[3] + j[3];
              all_equal &= dense.data()[at] == t.data()[n];
            }
      INFO("axes " << p << ", " << q << ", " << threads << " threads");
      CHECK(all_equal);
    }
  }
  omp_set_num_threads(threads_before);
  CHECK(Tensor::empty({3, 0}).transpose(0, 1).contiguous().numel() == 0);
}

TEST_CASE("large fills, copies, concat and split, forward and backward, on one thread or two") {
  const Tensor x = random_tensor({300, 300}, 22);  // 90,000 elements: above the parallel size
  const int threads_before = omp_get_max_threads();
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    CHECK(x.clone().to_vector() == x.to_vector());
    CHECK(Tensor::full({300, 300}, 1.5f).to_vector() == std::vector<float>(90000, 1.5f));
    Var xv(x, true);
    auto parts = split(xv, {100, 200}, 1);
    bool split_ok = true;
    for (int64_t r = 0; r < 300; ++r)
      for (int64_t c = 0; c < 300; ++c)
        split_ok &= (c < 100 ? parts[0].value().data()[r * 100 + c] : parts[1].value().data()[r * 200 + c - 100]) ==
                    x.data()[r * 300 + c];
    CHECK(split_ok);
    CHECK(concat({parts[0], parts[1]}, 1).value().to_vector() == x.to_vector());
    // x also reaches the loss directly, so one split part's gradient lands on an existing one.
    backward(sum(concat({scale(parts[1], 2.f), parts[0], xv}, 1)));
    bool grad_ok = true;
    for (int64_t r = 0; r < 300; ++r)
      for (int64_t c = 0; c < 300; ++c) grad_ok &= xv.grad().data()[r * 300 + c] == (c < 100 ? 2.f : 3.f);
    INFO(threads << " threads");
    CHECK(grad_ok);
    // Along the first axis (a decoder's per-step rows): 30 parts, each a single block; one
    // part takes no gradient.
    std::vector<Var> rows;
    for (int64_t i = 0; i < 30; ++i) rows.emplace_back(x.slice(10 * i, 10 * (i + 1)).clone(), i != 7);
    Var stacked = concat(rows, 0);
    CHECK(stacked.value().to_vector() == x.to_vector());
    backward(sum(mul(stacked, Var(x))));
    bool rows_ok = !rows[7].grad().defined();
    for (int64_t i = 0; i < 30; ++i)
      if (i != 7) rows_ok &= rows[i].grad().to_vector() == x.slice(10 * i, 10 * (i + 1)).clone().to_vector();
    CHECK(rows_ok);
  }
  omp_set_num_threads(threads_before);
}
