#pragma once
// The precision of matrix products. In bf16, every product of tensor/ (the matmul and linear ops,
// forward and both gradients, batched attention products, the GRU's recurrent products, the packed
// products of decoding) reads bf16 copies of its two operands and accumulates and writes in fp32.
// That is the one list: everything else stays fp32 (weights, gradients, optimizer moments, loss,
// softmax, layer norm, elementwise ops, embeddings' lookups and the bias sums), as in the mixed
// precision recipe of Kalamkar et al. (2019) and oneDNN's training_bf16 example.
//
// Operands are rounded to bf16 (nearest even) when a product runs; weights registered in a
// Bf16WeightCopies are rounded once per update instead, by refresh().
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "tensor/tensor.hpp"

namespace heed {

enum class MatmulPrecision { fp32, bf16 };

// Process-wide: set once by a command before it trains or decodes.
void set_matmul_precision(MatmulPrecision precision);
MatmulPrecision matmul_precision();

// Sets a precision for a scope (tests), restoring the previous one.
class ScopedMatmulPrecision {
 public:
  explicit ScopedMatmulPrecision(MatmulPrecision precision) : previous_(matmul_precision()) {
    set_matmul_precision(precision);
  }
  ~ScopedMatmulPrecision() { set_matmul_precision(previous_); }
  ScopedMatmulPrecision(const ScopedMatmulPrecision&) = delete;
  ScopedMatmulPrecision& operator=(const ScopedMatmulPrecision&) = delete;

 private:
  MatmulPrecision previous_;
};

// Whether this CPU multiplies bf16 natively (oneDNN's effective ISA has avx512_core_bf16 or
// AMX). Without it oneDNN emulates bf16 products, slower than fp32.
bool cpu_has_bf16();

// What a config's "fp32" | "bf16" | "auto" means on a CPU with or without bf16: auto is bf16
// where the CPU has it; bf16 without it is a UsageError naming `field`.
enum class PrecisionRequest { fp32, bf16, auto_ };
MatmulPrecision resolve_precision(PrecisionRequest request, bool cpu_bf16, std::string_view field);

// Rounds n floats to bf16 (nearest even; NaN stays NaN), as the raw 16-bit patterns.
void round_to_bf16(const float* src, int64_t n, uint16_t* dst);
float bf16_to_float(uint16_t bits);

// bf16 copies of weights (a model's parameters) for the products that read them: made by the
// constructor and by refresh_bf16_weight_copies() (the optimizer update and parameter loading
// call it), found by the products through the weight's buffer. The copies are in use while this
// object lives (one at a time).
class Bf16WeightCopies {
 public:
  explicit Bf16WeightCopies(std::vector<Tensor> weights);
  ~Bf16WeightCopies();
  Bf16WeightCopies(const Bf16WeightCopies&) = delete;
  Bf16WeightCopies& operator=(const Bf16WeightCopies&) = delete;
  void refresh();
  int64_t refreshes() const { return refreshes_; }  // including the constructor's

 private:
  std::vector<Tensor> weights_;
  std::vector<std::vector<uint16_t>> copies_;
  int64_t refreshes_ = 0;
};

// Refreshes the copies in use, if any: call it whenever weights have changed.
void refresh_bf16_weight_copies();

// For tensor/ops: the bf16 copy of n floats at p, if they lie inside a registered weight.
const uint16_t* find_bf16_copy(const float* p, int64_t n);

}  // namespace heed
