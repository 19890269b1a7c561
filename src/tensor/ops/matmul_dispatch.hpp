#pragma once
// Private to tensor/: the product every matmul and linear op runs, C = op(A)·op(B) (+ bias)
// (+= C) on oneDNN, choosing among cached exact-shape, runtime-sized and row-chunked primitives
// (matmul_dispatch.cpp says which and why). A and B are dense; 3-D operands are batched.
#include <cstdint>
#include <memory>

#include "tensor/tensor.hpp"

namespace heed {

// Outputs at least this wide (vocabulary projections) take their own paths: chunked rows for
// x·Wᵀ + b here, wider column blocks for the bias gradient in linalg.cpp.
inline constexpr int64_t kWideOutput = 4096;

// An operand's bf16 rounding made once for several products (tensor/precision.hpp): a linear's
// input (forward and weight gradient), its output gradient (input and weight gradients). The
// same layout as the tensor's buffer; empty (data() null) in fp32.
class RoundedOperand {
 public:
  RoundedOperand() = default;
  explicit RoundedOperand(const Tensor& t);  // rounds t when the precision is bf16
  const uint16_t* data() const { return bits_.get(); }

 private:
  std::shared_ptr<uint16_t[]> bits_;  // not zeroed first: every value is written
};

// a16, b16: the operands' roundings when the caller has them (RoundedOperand::data()); else the
// product rounds what it needs.
void run_matmul(const Tensor& c, const Tensor& a, bool ta, const Tensor& b, bool tb, const Tensor* bias,
                bool accumulate, const uint16_t* a16 = nullptr, const uint16_t* b16 = nullptr);

}  // namespace heed
