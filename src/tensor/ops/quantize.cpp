#include "tensor/quantize.hpp"

#include <cpuid.h>

#include <algorithm>
#include <cmath>

#include "util/error.hpp"

namespace heed {

float quantize_row(const float* row, int64_t cols, int8_t* out, int levels) {
  float top = 0;
  for (int64_t i = 0; i < cols; ++i) top = std::max(top, std::fabs(row[i]));
  const float limit = static_cast<float>(levels);
  const float scale = top > 0 ? top / limit : 1.f;
  const float inverse = 1.f / scale;
  for (int64_t i = 0; i < cols; ++i) {
    const float q = std::nearbyint(row[i] * inverse);
    out[i] = static_cast<int8_t>(std::clamp(q, -limit, limit));
  }
  return scale;
}

namespace {
// AVX512-VNNI (with the OS saving the AVX-512 registers) or AVX-VNNI, read with cpuid: the
// compilers' __builtin_cpu_supports do not all know "avxvnni".
bool has_vnni() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(1, 0, &eax, &ebx, &ecx, &edx) || !(ecx & bit_OSXSAVE)) return false;
  unsigned xcr0_low = 0, xcr0_high = 0;
  __asm__("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  const bool ymm_saved = (xcr0_low & 0x6) == 0x6, zmm_saved = (xcr0_low & 0xe6) == 0xe6;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  const bool avx512_vnni = (ecx >> 11) & 1;
  if (avx512_vnni && zmm_saved) return true;
  if (!__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) return false;
  const bool avx_vnni = (eax >> 4) & 1;
  return avx_vnni && ymm_saved;
}
}  // namespace

int int8_weight_levels() {
  static const int levels = has_vnni() ? 127 : 63;
  return levels;
}

QuantizedRows quantize_rows(const Tensor& a, int levels) {
  if (a.ndim() != 2) throw Error("quantize_rows: a 2-D tensor expected, got " + shape_str(a.shape()));
  const Tensor dense = a.contiguous();
  QuantizedRows q;
  q.rows = a.dim(0);
  q.cols = a.dim(1);
  q.values.resize(static_cast<size_t>(q.rows * q.cols));
  q.scales.resize(static_cast<size_t>(q.rows));
  for (int64_t r = 0; r < q.rows; ++r)
    q.scales[r] = quantize_row(dense.data() + r * q.cols, q.cols, q.values.data() + r * q.cols, levels);
  return q;
}

Tensor dequantize_rows(const QuantizedRows& q) {
  if (q.values.size() != static_cast<size_t>(q.rows * q.cols) || q.scales.size() != static_cast<size_t>(q.rows))
    throw Error("dequantize_rows: " + std::to_string(q.values.size()) + " values and " +
                std::to_string(q.scales.size()) + " scales for " + std::to_string(q.rows) + " x " +
                std::to_string(q.cols));
  Tensor out = Tensor::empty({q.rows, q.cols});
  for (int64_t r = 0; r < q.rows; ++r)
    for (int64_t c = 0; c < q.cols; ++c) out.data()[r * q.cols + c] = q.scales[r] * q.values[r * q.cols + c];
  return out;
}

}  // namespace heed
