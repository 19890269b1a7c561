#pragma once
// GFLOP/s of heed's matmul wrappers (matmul_into, linear) beside a bare oneDNN matmul primitive
// on the same shapes, in the same run. The bare primitive is the best case: created once, memory
// objects bound once, only execute() in the loop. Timed loops of the two alternate (A B A B ...)
// so that load from other processes hits both alike; the figure is the median loop's rate.
// The forms are those a training step runs for y = x·Wᵀ (+ b), x [M, K], W [N, K]: forward
// (x·Wᵀ, and linear with bias), input gradient dx = dy·W, weight gradient dW += dyᵀ·x.
// Under MatmulPrecision::bf16 both sides run in bf16: the bare primitive on operands rounded
// once, heed's products rounding activations per call and reading W's bf16 copy, as in training.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace heed {

struct MatmulShape {
  int64_t m, k, n;
};

// "MxKxN" with positive sizes; anything else is a UsageError naming --shape.
MatmulShape parse_matmul_shape(const std::string& text);

struct OpBenchResult {
  std::string name;  // "2048x512x2048 x·Wᵀ matmul_into"
  double heed_gflops, onednn_gflops;
};

// Runs every case of every shape, calling `report` as each finishes. Each case's result is first
// compared with the bare primitive's (an Error when they differ beyond rounding).
void bench_matmul_ops(const std::vector<MatmulShape>& shapes, int loops, double loop_seconds,
                      const std::function<void(const OpBenchResult&)>& report);

// Decoding step products y = x·Wᵀ + b on prepared weights (linear with a PackedWeight): fp32
// against int8 (pack_weight_int8), timed alternately, medians. The int8 rate counts the same
// 2·M·K·N operations, plus its own activation quantization and rescaling.
struct StepProductResult {
  std::string name;  // "32x512x8000"
  double fp32_gflops, int8_gflops;
};
void bench_step_products(const std::vector<MatmulShape>& shapes, int loops, double loop_seconds,
                         const std::function<void(const StepProductResult&)>& report);

}  // namespace heed
