#include "tensor/op_bench.hpp"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <unordered_map>

#include "tensor/dnnl_context.hpp"
#include "tensor/ops.hpp"
#include "tensor/precision.hpp"
#include "tensor/random.hpp"
#include "util/error.hpp"

namespace heed {

MatmulShape parse_matmul_shape(const std::string& text) {
  MatmulShape s{};
  char x1 = 0, x2 = 0;
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%ld%c%ld%c%ld%n", &s.m, &x1, &s.k, &x2, &s.n, &consumed) != 5 || x1 != 'x' ||
      x2 != 'x' || consumed != static_cast<int>(text.size()) || s.m <= 0 || s.k <= 0 || s.n <= 0)
    throw UsageError("--shape: expected MxKxN with positive sizes, got '" + text + "'");
  return s;
}

// Calls per second of `call`, one timed loop of at least `seconds`.
namespace {
using dnnl::memory;

double loop_rate(const std::function<void()>& call, double seconds) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  int64_t calls = 0;
  double elapsed = 0;
  do {
    call();
    ++calls;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  } while (elapsed < seconds);
  return calls / elapsed;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// A bare oneDNN matmul C = op(A)·op(B) (+ bias) (+= C), its memory bound once. In bf16, A and
// B are rounded to bf16 once, here: the primitive alone, the roofline of heed's bf16 products.
class BareMatmul {
 public:
  BareMatmul(const Tensor& c, const Tensor& a, bool ta, const Tensor& b, bool tb, const Tensor* bias, bool accumulate) {
    const bool bf16 = matmul_precision() == MatmulPrecision::bf16;
    const memory::data_type in_type = bf16 ? memory::data_type::bf16 : memory::data_type::f32;
    auto desc2 = [](const Tensor& t, bool trans, memory::data_type type) {
      const int64_t r = t.dim(0), c = t.dim(1);
      return trans ? memory::desc({c, r}, type, memory::dims{1, c}) : memory::desc({r, c}, type, memory::dims{c, 1});
    };
    memory::desc amd = desc2(a, ta, in_type), bmd = desc2(b, tb, in_type), cmd = desc2(c, false, memory::data_type::f32);
    void* a_data = a.data();
    void* b_data = b.data();
    if (bf16) {
      a16_.resize(static_cast<size_t>(a.numel()));
      b16_.resize(static_cast<size_t>(b.numel()));
      round_to_bf16(a.data(), a.numel(), a16_.data());
      round_to_bf16(b.data(), b.numel(), b16_.data());
      a_data = a16_.data();
      b_data = b16_.data();
    }
    dnnl::primitive_attr attr;
    if (accumulate) {
      dnnl::post_ops po;
      po.append_sum(1.f);
      attr.set_post_ops(po);
    }
    auto& eng = dnnl_ctx::engine();
    if (bias) {
      memory::desc bias_md({1, c.dim(1)}, memory::data_type::f32, memory::dims{c.dim(1), 1});
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(amd, bmd, bias_md, cmd), attr, eng);
      prim_ = dnnl::matmul(pd);
      args_[DNNL_ARG_BIAS] = memory(pd.bias_desc(), eng, bias->data());
    } else {
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(amd, bmd, cmd), attr, eng);
      prim_ = dnnl::matmul(pd);
    }
    args_[DNNL_ARG_SRC] = memory(amd, eng, a_data);
    args_[DNNL_ARG_WEIGHTS] = memory(bmd, eng, b_data);
    args_[DNNL_ARG_DST] = memory(cmd, eng, c.data());
  }
  void run() {
    prim_.execute(dnnl_ctx::stream(), args_);
    dnnl_ctx::stream().wait();
  }

 private:
  dnnl::matmul prim_;
  std::unordered_map<int, memory> args_;
  std::vector<uint16_t> a16_, b16_;
};

Tensor random_tensor(const Shape& shape, uint64_t seed) {
  Tensor t = Tensor::empty(shape);
  Rng rng(seed);
  rng.fill_uniform(t, -1.f, 1.f);
  return t;
}

struct Case {
  std::string name;
  double flops;
  std::function<void()> ours;
  std::shared_ptr<BareMatmul> bare;
  Tensor ours_out, bare_out;
  Tensor weight;  // W, whose bf16 copy training keeps (made once per update, not per product)
};

// The forms a model's training step runs for y = x·Wᵀ (+ b), x [M, K], W [N, K]: forward
// (matmul_into with Bᵀ, and linear with bias), input gradient dx = dy·W (plain), weight gradient
// dW += dyᵀ·x (transposed A, accumulating).
std::vector<Case> cases_for(const MatmulShape& s) {
  const double flops = 2.0 * s.m * s.k * s.n;
  const std::string dims = std::to_string(s.m) + "x" + std::to_string(s.k) + "x" + std::to_string(s.n);
  Tensor x = random_tensor({s.m, s.k}, 1), w = random_tensor({s.n, s.k}, 2), bias = random_tensor({s.n}, 3);
  Tensor dy = random_tensor({s.m, s.n}, 4);
  std::vector<Case> cases;
  {
    Tensor ours = Tensor::zeros({s.m, s.n}), bare = Tensor::zeros({s.m, s.n});
    cases.push_back({dims + " x·Wᵀ matmul_into", flops, [=] { matmul_into(ours, x, w, false, true); },
                     std::make_shared<BareMatmul>(bare, x, false, w, true, nullptr, false), ours, bare, w});
  }
  {
    Tensor bare = Tensor::zeros({s.m, s.n});
    auto holder = std::make_shared<Tensor>();
    Var xv(x), wv(w), bv(bias);
    Case c{dims + " x·Wᵀ+b linear",
           flops,
           nullptr,
           std::make_shared<BareMatmul>(bare, x, false, w, true, &bias, false),
           Tensor(),
           bare,
           w};
    c.ours = [=] {
      NoGradGuard no_grad;
      *holder = linear(xv, wv, bv).value();
    };
    cases.push_back(c);
    cases.back().ours();
    cases.back().ours_out = *holder;  // compared once below; later calls allocate anew, as in training
  }
  {
    Tensor ours = Tensor::zeros({s.m, s.k}), bare = Tensor::zeros({s.m, s.k});
    cases.push_back({dims + " dy·W (dx) matmul_into", flops, [=] { matmul_into(ours, dy, w, false, false); },
                     std::make_shared<BareMatmul>(bare, dy, false, w, false, nullptr, false), ours, bare, w});
  }
  {
    Tensor ours = Tensor::zeros({s.n, s.k}), bare = Tensor::zeros({s.n, s.k});
    cases.push_back({dims + " dW+=dyᵀ·x matmul_into", flops, [=] { matmul_into(ours, dy, x, true, false, true); },
                     std::make_shared<BareMatmul>(bare, dy, true, x, false, nullptr, true), ours, bare, Tensor()});
  }
  return cases;
}

// Our 2-D products run on oneDNN's runtime-sized kernels, the bare primitive on exact-shape ones:
// the sums are taken in another order, so they agree to float rounding, not bit for bit.
bool same_up_to_rounding(const Tensor& ours, const Tensor& bare) {
  const std::vector<float> a = ours.to_vector(), b = bare.to_vector();
  if (a.size() != b.size()) return false;
  float scale = 0;
  for (float x : b) scale = std::max(scale, std::fabs(x));
  for (size_t i = 0; i < a.size(); ++i)
    if (!(std::fabs(a[i] - b[i]) <= 1e-5f * scale)) return false;
  return true;
}

}  // namespace

void bench_matmul_ops(const std::vector<MatmulShape>& shapes, int loops, double loop_seconds,
                      const std::function<void(const OpBenchResult&)>& report) {
  for (const auto& shape : shapes) {
    for (auto& c : cases_for(shape)) {
      std::optional<Bf16WeightCopies> copies;
      if (matmul_precision() == MatmulPrecision::bf16 && c.weight.defined()) copies.emplace(std::vector<Tensor>{c.weight});
      c.ours();  // warm-up (primitive creation) and one comparison of the results
      c.bare->run();
      if (c.ours_out.defined() && !same_up_to_rounding(c.ours_out, c.bare_out))
        throw Error("bench " + c.name + ": heed and oneDNN results differ beyond rounding");
      std::vector<double> ours, bare;
      for (int i = 0; i < loops; ++i) {
        ours.push_back(loop_rate(c.ours, loop_seconds) * c.flops * 1e-9);
        bare.push_back(loop_rate([&] { c.bare->run(); }, loop_seconds) * c.flops * 1e-9);
      }
      report({c.name, median(ours), median(bare)});
    }
  }
}

void bench_step_products(const std::vector<MatmulShape>& shapes, int loops, double loop_seconds,
                         const std::function<void(const StepProductResult&)>& report) {
  for (const auto& s : shapes) {
    const Tensor x = random_tensor({s.m, s.k}, 1), w = random_tensor({s.n, s.k}, 2), bias = random_tensor({s.n}, 3);
    const PackedWeight fp32 = pack_weight(w), int8 = pack_weight_int8(w);
    Tensor y32 = Tensor::empty({s.m, s.n}), y8 = Tensor::empty({s.m, s.n});
    const auto run32 = [&] { linear_into(y32, x, fp32, bias); };
    const auto run8 = [&] { linear_into(y8, x, int8, bias); };
    run32();  // warm-up: primitive creation
    run8();
    const double flops = 2.0 * s.m * s.k * s.n;
    std::vector<double> a, b;
    for (int i = 0; i < loops; ++i) {
      a.push_back(loop_rate(run32, loop_seconds) * flops * 1e-9);
      b.push_back(loop_rate(run8, loop_seconds) * flops * 1e-9);
    }
    report({std::to_string(s.m) + "x" + std::to_string(s.k) + "x" + std::to_string(s.n), median(a), median(b)});
  }
}

}  // namespace heed
