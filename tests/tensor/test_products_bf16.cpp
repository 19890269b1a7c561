// bf16 products (MatmulPrecision::bf16) on every path of the matmul dispatch: runtime-sized,
// chunked reductions, chunked rows, wide outputs with a bias, batched, packed weights, and the
// linear op's gradients. Each result is checked two ways:
//   1. against the exact product of the bf16-rounded operands (computed in double): only fp32
//      accumulation error may remain, |Δ| ≤ 1e-5 · Σ_k |a_k b_k| (K ≤ 1100 terms, rounding
//      2⁻²⁴ each, summed in blocks); this fails if an operand is not rounded or not the one meant;
//   2. against the fp32 product: |Δ| ≤ 2 · 2⁻⁸ · √K · max|a| · max|b|, the stated bf16 tolerance
//      (unit roundoff 2⁻⁸ per operand, random-signed over K terms: the measured worst is about a
//      tenth of it), and the two differ somewhere (the bf16 path ran).
// Skipped on a CPU without bf16 (catch_main.cpp).
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "tensor/autograd.hpp"
#include "tensor/ops.hpp"
#include "tensor/precision.hpp"
#include "tensor/random.hpp"

using namespace heed;

namespace {
Tensor random(const Shape& shape, uint64_t seed) {
  Tensor t = Tensor::empty(shape);
  Rng rng(seed);
  rng.fill_uniform(t, -1.f, 1.f);
  return t;
}

Tensor bf16_rounded(const Tensor& t) {
  const Tensor d = t.contiguous();
  Tensor out = Tensor::empty(d.shape());
  std::vector<uint16_t> bits(static_cast<size_t>(d.numel()));
  round_to_bf16(d.data(), d.numel(), bits.data());
  for (int64_t i = 0; i < d.numel(); ++i) out.data()[i] = bf16_to_float(bits[i]);
  return out;
}

// C = A·Bᵀ' for 2-D row-major A [M, K] and B given as [K, N] (already transposed as needed).
struct Reference {
  std::vector<double> value, magnitude;  // Σ a b and Σ |a b|
};
Reference reference_product(const Tensor& a, const Tensor& b) {
  const int64_t M = a.dim(0), K = a.dim(1), N = b.dim(1);
  Reference r{std::vector<double>(M * N), std::vector<double>(M * N)};
  for (int64_t m = 0; m < M; ++m)
    for (int64_t k = 0; k < K; ++k) {
      const double av = a.data()[m * K + k];
      for (int64_t n = 0; n < N; ++n) {
        const double p = av * b.data()[k * N + n];
        r.value[m * N + n] += p;
        r.magnitude[m * N + n] += std::fabs(p);
      }
    }
  return r;
}

// Checks c_bf16 (and c_fp32) for the product op(A)·op(B) given as plain [M, K] and [K, N] tensors.
void check_product(const Tensor& c16, const Tensor& c32, const Tensor& a_mk, const Tensor& b_kn, const Tensor& add) {
  const int64_t K = a_mk.dim(1), N = b_kn.dim(1);
  const Reference exact = reference_product(bf16_rounded(a_mk), bf16_rounded(b_kn));
  float amax = 0, bmax = 0;
  for (int64_t i = 0; i < a_mk.numel(); ++i) amax = std::max(amax, std::fabs(a_mk.data()[i]));
  for (int64_t i = 0; i < b_kn.numel(); ++i) bmax = std::max(bmax, std::fabs(b_kn.data()[i]));
  const double bf16_tolerance = 2 * 0x1p-8 * std::sqrt(double(K)) * amax * bmax;
  double worst_exact = 0, worst_fp32 = 0, differ = 0;
  for (int64_t i = 0; i < c16.numel(); ++i) {
    const double extra = add.defined() ? add.data()[i % (add.numel())] : 0.0;
    worst_exact = std::max(worst_exact, std::fabs(c16.data()[i] - extra - exact.value[i]) /
                                            (1e-5 * exact.magnitude[i] + 1e-6 * std::fabs(extra) + 1e-30));
    worst_fp32 = std::max(worst_fp32, std::fabs(double(c16.data()[i]) - c32.data()[i]) / bf16_tolerance);
    differ = std::max(differ, std::fabs(double(c16.data()[i]) - c32.data()[i]));
  }
  INFO("K " << K << " N " << N << ": worst |Δ| over the accumulation bound " << worst_exact
            << ", over the bf16 tolerance " << worst_fp32);
  CHECK(worst_exact <= 1.0);
  CHECK(worst_fp32 <= 1.0);
  CHECK(differ > 0);
}

Tensor product(MatmulPrecision p, const Tensor& a, const Tensor& b, bool ta, bool tb, const Shape& shape,
               const Tensor& start = Tensor()) {
  ScopedMatmulPrecision scope(p);
  Tensor c = start.defined() ? start.clone() : Tensor::empty(shape);
  matmul_into(c, a, b, ta, tb, start.defined());
  return c;
}
}  // namespace

TEST_CASE("bf16 matmul paths: within accumulation error of the rounded operands' product", "[bf16]") {
  SECTION("runtime-sized, B transposed") {
    const Tensor a = random({37, 100}, 1), b = random({50, 100}, 2);
    const Tensor c16 = product(MatmulPrecision::bf16, a, b, false, true, {37, 50});
    const Tensor c32 = product(MatmulPrecision::fp32, a, b, false, true, {37, 50});
    check_product(c16, c32, a, b.transpose(0, 1).contiguous(), Tensor());
  }
  SECTION("chunked reduction (A transposed, K = 1100: two chunks and a rest), accumulating") {
    const Tensor a = random({1100, 64}, 3), b = random({1100, 48}, 4), start = random({64, 48}, 5);
    const Tensor c16 = product(MatmulPrecision::bf16, a, b, true, false, {64, 48}, start);
    const Tensor c32 = product(MatmulPrecision::fp32, a, b, true, false, {64, 48}, start);
    check_product(c16, c32, a.transpose(0, 1).contiguous(), b, start);
  }
  SECTION("batched, and a 2-D B shared by the batch") {
    const Tensor a = random({3, 20, 40}, 6), b = random({3, 40, 30}, 7), shared = random({40, 30}, 8);
    const Tensor c16 = product(MatmulPrecision::bf16, a, b, false, false, {3, 20, 30});
    const Tensor c32 = product(MatmulPrecision::fp32, a, b, false, false, {3, 20, 30});
    for (int64_t i = 0; i < 3; ++i)
      check_product(c16.slice(i, i + 1).reshape({20, 30}).contiguous(), c32.slice(i, i + 1).reshape({20, 30}).contiguous(),
                    a.slice(i, i + 1).reshape({20, 40}).contiguous(), b.slice(i, i + 1).reshape({40, 30}).contiguous(),
                    Tensor());
    const Tensor s16 = product(MatmulPrecision::bf16, a, shared, false, false, {3, 20, 30});
    const Tensor s32 = product(MatmulPrecision::fp32, a, shared, false, false, {3, 20, 30});
    check_product(s16.reshape({60, 30}), s32.reshape({60, 30}), a.reshape({60, 40}), shared, Tensor());
  }
}

TEST_CASE("bf16 linear: chunked rows (long reduction, wide output with bias) and packed weights", "[bf16]") {
  auto linear_with = [](MatmulPrecision p, const Tensor& x, const Tensor& w, const Tensor& bias) {
    ScopedMatmulPrecision scope(p);
    NoGradGuard no_grad;
    return linear(Var(x), Var(w), bias.defined() ? Var(bias) : Var()).value();
  };
  SECTION("K = 1024, 1100 rows") {
    const Tensor x = random({1100, 1024}, 9), w = random({96, 1024}, 10);
    check_product(linear_with(MatmulPrecision::bf16, x, w, Tensor()), linear_with(MatmulPrecision::fp32, x, w, Tensor()),
                  x, w.transpose(0, 1).contiguous(), Tensor());
  }
  SECTION("N = 4100 with a bias, 600 rows") {
    const Tensor x = random({600, 64}, 11), w = random({4100, 64}, 12), bias = random({4100}, 13);
    check_product(linear_with(MatmulPrecision::bf16, x, w, bias), linear_with(MatmulPrecision::fp32, x, w, bias), x,
                  w.transpose(0, 1).contiguous(), bias);
  }
  SECTION("packed weights, row counts across the row pieces, and a transposed view") {
    const Tensor w = random({70, 90}, 14), bias = random({70}, 15);
    PackedWeight p16, p32, t16;
    {
      ScopedMatmulPrecision scope(MatmulPrecision::bf16);
      p16 = pack_weight(w);
      t16 = pack_weight(w.transpose(0, 1));
    }
    p32 = pack_weight(w);
    CHECK(p16.bf16);
    CHECK_FALSE(p32.bf16);
    for (const int64_t rows : {1, 17, 300}) {
      const Tensor x = random({rows, 90}, 16 + rows);
      check_product(linear(x, p16, bias), linear(x, p32, bias), x, w.transpose(0, 1).contiguous(), bias);
      const Tensor g = random({rows, 70}, 17 + rows);
      check_product(linear(g, t16, Tensor()), linear(g, pack_weight(w.transpose(0, 1)), Tensor()), g, w, Tensor());
    }
  }
}

TEST_CASE("bf16 weight copies: a registered weight's product reads its copy, made once per refresh", "[bf16]") {
  ScopedMatmulPrecision scope(MatmulPrecision::bf16);
  NoGradGuard no_grad;
  const Tensor x = random({8, 40}, 20);
  Tensor w = random({30, 40}, 21);
  const Tensor plain = linear(Var(x), Var(w), Var()).value();
  Bf16WeightCopies copies({w});
  const Tensor with_copy = linear(Var(x), Var(w), Var()).value();
  for (int64_t i = 0; i < plain.numel(); ++i) REQUIRE(with_copy.data()[i] == plain.data()[i]);
  const Tensor old_w = w.clone();
  for (int64_t i = 0; i < w.numel(); ++i) w.data()[i] *= 2.f;
  // until refreshed, products read the copy of the old values
  const Tensor stale = linear(Var(x), Var(w), Var()).value();
  for (int64_t i = 0; i < plain.numel(); ++i) REQUIRE(stale.data()[i] == plain.data()[i]);
  refresh_bf16_weight_copies();
  const Tensor fresh = linear(Var(x), Var(w), Var()).value();
  for (int64_t i = 0; i < plain.numel(); ++i) CHECK(fresh.data()[i] == 2.f * plain.data()[i]);  // exact: ×2 is exact
}

TEST_CASE("bf16 linear gradients: dx, dW and db within the bf16 tolerance of fp32", "[bf16]") {
  const Tensor x = random({300, 120}, 30), w = random({80, 120}, 31), bias = random({80}, 32), g = random({300, 80}, 33);
  struct Grads {
    Tensor dx, dw, db;
  };
  auto grads = [&](MatmulPrecision p) {
    ScopedMatmulPrecision scope(p);
    Var xv(x.clone(), true), wv(w.clone(), true), bv(bias.clone(), true);
    clear_tape();
    backward(sum(mul(linear(xv, wv, bv), Var(g))));
    return Grads{xv.grad(), wv.grad(), bv.grad()};
  };
  const Grads g16 = grads(MatmulPrecision::bf16), g32 = grads(MatmulPrecision::fp32);
  // dx = g·W (K = 80), dW = gᵀ·x (K = 300 rows), db = Σ rows of g (fp32 in both: equal)
  check_product(g16.dx, g32.dx, g, w, Tensor());
  check_product(g16.dw, g32.dw, g.transpose(0, 1).contiguous(), x, Tensor());
  for (int64_t i = 0; i < 80; ++i) CHECK(g16.db.data()[i] == g32.db.data()[i]);
}
