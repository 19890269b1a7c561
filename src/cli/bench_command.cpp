// `heed bench ops`: the matmul benchmark of tensor/op_bench as a table, with the load average
// before and after; ratio = heed / bare oneDNN.
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "cli/registry.hpp"
#include "cli/validators.hpp"
#include "tensor/op_bench.hpp"
#include "util/threads.hpp"

namespace heed::cli {
namespace {

struct BenchOptions {
  int loops = 5;
  double loop_seconds = 0.3;
  std::vector<std::string> shapes{"64x512x512", "2048x512x2048", "2048x256x8000"};
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
  print_load();
  std::printf("threads: %d, %d timed loops of >= %.2f s each, median GFLOP/s (M x K x N)\n", num_threads(), opt.loops,
              opt.loop_seconds);
  std::printf("%-36s %10s %10s %7s\n", "case", "heed", "oneDNN", "ratio");
  bench_matmul_ops(shapes, opt.loops, opt.loop_seconds, [](const OpBenchResult& r) {
    std::printf("%-36s %10.1f %10.1f %7.3f\n", r.name.c_str(), r.heed_gflops, r.onednn_gflops,
                r.heed_gflops / r.onednn_gflops);
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
  registry.on_run(ops, [opt] { run_bench(*opt); });
}

}  // namespace heed::cli
