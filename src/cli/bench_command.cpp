// `heed bench ops`: the matmul benchmark of tensor/op_bench as a table, with the load average
// before and after; ratio = heed / bare oneDNN. `heed bench int8`: decoding step products,
// int8 against fp32 weights; ratio = int8 / fp32.
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "cli/registry.hpp"
#include "cli/validators.hpp"
#include "tensor/op_bench.hpp"
#include "tensor/precision.hpp"
#include "tensor/quantize.hpp"
#include "util/threads.hpp"

namespace heed::cli {
namespace {

struct BenchOptions {
  int loops = 5;
  double loop_seconds = 0.3;
  std::vector<std::string> shapes{"64x512x512", "2048x512x2048", "2048x256x8000"};
  std::string precision = "fp32";
};

void print_load() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  if (in >> one >> five >> fifteen)
    std::printf("load average: %s, %s, %s\n", one.c_str(), five.c_str(), fifteen.c_str());
}

void run_bench(const BenchOptions& opt) {
  std::vector<MatmulShape> shapes;
  for (const auto& s : opt.shapes) shapes.push_back(parse_matmul_shape(s));
  ScopedMatmulPrecision scope(resolve_precision(opt.precision == "bf16" ? PrecisionRequest::bf16 : PrecisionRequest::fp32,
                                                cpu_has_bf16(), "--precision"));
  print_load();
  std::printf("threads: %d, %d timed loops of >= %.2f s each, median GFLOP/s (M x K x N), %s\n", num_threads(),
              opt.loops, opt.loop_seconds, opt.precision.c_str());
  std::printf("%-36s %10s %10s %7s\n", "case", "heed", "oneDNN", "ratio");
  bench_matmul_ops(shapes, opt.loops, opt.loop_seconds, [](const OpBenchResult& r) {
    std::printf("%-36s %10.1f %10.1f %7.3f\n", r.name.c_str(), r.heed_gflops, r.onednn_gflops,
                r.heed_gflops / r.onednn_gflops);
    std::fflush(stdout);
  });
  print_load();
}
struct Int8BenchOptions {
  int loops = 5;
  double loop_seconds = 0.3;
  // A decoding step's products at the default sizes: 32 rows (greedy, a batch of 32) and 160
  // (beam 5); a hidden projection and the vocabulary projection.
  std::vector<std::string> shapes{"32x512x512", "32x512x2048", "32x512x8000", "160x512x2048", "160x512x8000"};
};

void run_int8_bench(const Int8BenchOptions& opt) {
  std::vector<MatmulShape> shapes;
  for (const auto& s : opt.shapes) shapes.push_back(parse_matmul_shape(s));
  print_load();
  std::printf("threads: %d, %d timed loops of >= %.2f s each, median GFLOP/s of x·Wᵀ+b on prepared weights\n",
              num_threads(), opt.loops, opt.loop_seconds);
  std::printf("int8 weights: %d levels (%s)\n", int8_weight_levels(),
              int8_weight_levels() == 127 ? "VNNI" : "no VNNI: 7-bit weights");
  std::printf("%-20s %10s %10s %7s\n", "M x K x N", "fp32", "int8", "ratio");
  bench_step_products(shapes, opt.loops, opt.loop_seconds, [](const StepProductResult& r) {
    std::printf("%-20s %10.1f %10.1f %7.3f\n", r.name.c_str(), r.fp32_gflops, r.int8_gflops,
                r.int8_gflops / r.fp32_gflops);
    std::fflush(stdout);
  });
  print_load();
}
}  // namespace

void add_bench_command(CLI::App& app, Registry& registry) {
  auto* bench = app.add_subcommand("bench", "micro-benchmarks");
  bench->require_subcommand(1);
  auto opt = std::make_shared<BenchOptions>();
  auto* ops = bench->add_subcommand("ops", "matmul wrappers against a bare oneDNN primitive (GFLOP/s)");
  ops->add_option("--loops", opt->loops, "timed loops per case (the median is reported)")
      ->check(whole_number(1))
      ->capture_default_str();
  ops->add_option("--loop-seconds", opt->loop_seconds, "minimum duration of one timed loop")
      ->check(number_from(0, /*exclusive=*/true))
      ->capture_default_str();
  ops->add_option("--shape", opt->shapes, "matmul shape MxKxN (repeatable)")->capture_default_str();
  ops->add_option("--precision", opt->precision, "products in fp32, or bf16 (needs avx512_bf16)")
      ->check(CLI::IsMember({"fp32", "bf16"}))
      ->capture_default_str();
  registry.on_run(ops, [opt] { run_bench(*opt); });

  auto int8 = std::make_shared<Int8BenchOptions>();
  auto* int8_cmd = bench->add_subcommand("int8", "decoding step products: int8 against fp32 weights (GFLOP/s)");
  int8_cmd->add_option("--loops", int8->loops, "timed loops per case (the median is reported)")
      ->check(whole_number(1))
      ->capture_default_str();
  int8_cmd->add_option("--loop-seconds", int8->loop_seconds, "minimum duration of one timed loop")
      ->check(number_from(0, /*exclusive=*/true))
      ->capture_default_str();
  int8_cmd->add_option("--shape", int8->shapes, "product shape MxKxN (repeatable)")->capture_default_str();
  registry.on_run(int8_cmd, [int8] { run_int8_bench(*int8); });
}

}  // namespace heed::cli
