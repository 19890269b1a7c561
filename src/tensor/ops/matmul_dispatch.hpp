#pragma once
// Private to tensor/: the product every matmul and linear op runs, C = op(A)·op(B) (+ bias)
// (+= C) on oneDNN, choosing among cached exact-shape, runtime-sized and row-chunked primitives
// (matmul_dispatch.cpp says which and why). A and B are dense; 3-D operands are batched.
#include "tensor/tensor.hpp"

namespace heed {

// Outputs at least this wide (vocabulary projections) take their own paths: chunked rows for
// x·Wᵀ + b here, wider column blocks for the bias gradient in linalg.cpp.
inline constexpr int64_t kWideOutput = 4096;

void run_matmul(const Tensor& c, const Tensor& a, bool ta, const Tensor& b, bool tb, const Tensor* bias,
                bool accumulate);

}  // namespace heed
