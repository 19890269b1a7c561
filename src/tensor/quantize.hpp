#pragma once
// Symmetric int8 quantization by rows, the scheme of int8 models (heed quantize) and of int8
// products: each row r of a matrix gets one scale s_r = max_i |a[r, i]| / 127 (1 for a row of
// zeros) and q[r, i] = round(a[r, i] / s_r), in [-127, 127]; a ≈ s_r · q. The rounding error of an
// element is at most s_r / 2. (Weights of products use int8_weight_levels() instead of 127.)
//
// The int8 product x · wᵀ quantizes the rows of x the same way on the fly, multiplies q_x · q_wᵀ
// exactly in int32 (oneDNN int8 matmul, weights scaled per output column), and scales each row
// by its s_x: y[m, o] = s_x[m] · s_w[o] · Σ_i q_x[m, i] q_w[o, i]. Its error against the fp32
// product of the dequantized weights is at most Σ_i |w[o, i]| · s_x[m] / 2 per element, which
// tests assert.
#include <cstdint>
#include <vector>

#include "tensor/tensor.hpp"

namespace heed {

struct QuantizedRows {
  int64_t rows = 0, cols = 0;
  std::vector<int8_t> values;  // [rows, cols]
  std::vector<float> scales;   // [rows]
};

QuantizedRows quantize_rows(const Tensor& a, int levels = 127);  // a 2-D tensor, any strides
Tensor dequantize_rows(const QuantizedRows& q);

// One row's quantization into `out` (cols values) onto [-levels, levels]; returns its scale.
float quantize_row(const float* row, int64_t cols, int8_t* out, int levels = 127);

// Levels of the weights of int8 products on this CPU: 127, or 63 without VNNI. Without VNNI,
// oneDNN multiplies int8 with vpmaddubsw, which adds pairs of u8 · s8 products in 16 bits and
// saturates: with 8-bit weights, 2 · 255 · 127 > 32767 (measured: wrong sums in 1 of 10 outputs).
// 7-bit weights keep every pair below 2 · 255 · 63 = 32130, so the sums are exact (tested), at
// twice the weight rounding; oneDNN halves the weights of its own int8 convolutions likewise.
int int8_weight_levels();

}  // namespace heed
