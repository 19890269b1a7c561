#include "tensor/precision.hpp"

#include <oneapi/dnnl/dnnl.hpp>

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>

#include "util/error.hpp"

namespace heed {
namespace {
std::atomic<MatmulPrecision> g_precision{MatmulPrecision::fp32};
Bf16WeightCopies* g_active_copies = nullptr;

// Weight buffers with copies, by start address, for find_bf16_copy.
struct CopyRange {
  const float* begin;
  int64_t n;
  const uint16_t* copy;
};
std::vector<CopyRange> g_ranges;  // sorted by begin
}  // namespace

void set_matmul_precision(MatmulPrecision precision) { g_precision.store(precision); }
MatmulPrecision matmul_precision() { return g_precision.load(); }

bool cpu_has_bf16() {
  const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  return isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
}

MatmulPrecision resolve_precision(PrecisionRequest request, bool cpu_bf16, std::string_view field) {
  switch (request) {
    case PrecisionRequest::fp32:
      return MatmulPrecision::fp32;
    case PrecisionRequest::auto_:
      return cpu_bf16 ? MatmulPrecision::bf16 : MatmulPrecision::fp32;
    case PrecisionRequest::bf16:
      if (!cpu_bf16)
        throw UsageError(std::string(field) +
                         " is bf16, but this CPU has no bf16 dot products (avx512_bf16): oneDNN would emulate "
                         "them, slower than fp32; use fp32 or auto");
      return MatmulPrecision::bf16;
  }
  return MatmulPrecision::fp32;
}

namespace {
void round_portable(const float* src, int64_t n, uint16_t* dst) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, &src[i], sizeof u);
    const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
    const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    dst[i] = static_cast<uint16_t>(nan ? ((u >> 16) | 0x40u) : rounded);
  }
}

// The CPU's own conversion (vcvtneps2bf16: nearest even, NaN kept quiet), 16 values at a time:
// rounding activations for bf16 products took 6 % of a Transformer step with the portable loop.
// It reads subnormal inputs as zero, the one difference (no product here sees them).
__attribute__((target("avx512f,avx512bf16"))) void round_avx512_bf16(const float* src, int64_t n, uint16_t* dst) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256bh packed = _mm512_cvtneps_pbh(_mm512_loadu_ps(src + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), reinterpret_cast<const __m256i&>(packed));
  }
  round_portable(src + i, n - i, dst + i);
}
}  // namespace

void round_to_bf16(const float* src, int64_t n, uint16_t* dst) {
  static const bool native = cpu_has_bf16();
  constexpr int64_t kPiece = 1 << 16;  // values per thread's piece
  const int64_t pieces = (n + kPiece - 1) / kPiece;
#pragma omp parallel for schedule(static) if (pieces > 2)
  for (int64_t p = 0; p < pieces; ++p) {
    const int64_t begin = p * kPiece, count = std::min(kPiece, n - begin);
    if (native)
      round_avx512_bf16(src + begin, count, dst + begin);
    else
      round_portable(src + begin, count, dst + begin);
  }
}

float bf16_to_float(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

Bf16WeightCopies::Bf16WeightCopies(std::vector<Tensor> weights) : weights_(std::move(weights)) {
  if (g_active_copies) throw Error("bf16 weight copies: another set is in use");
  for (const Tensor& w : weights_) {
    if (!w.is_contiguous()) throw Error("bf16 weight copies: a weight " + shape_str(w.shape()) + " is not dense");
    copies_.emplace_back(static_cast<size_t>(w.numel()));
  }
  refresh();
  for (size_t i = 0; i < weights_.size(); ++i) g_ranges.push_back({weights_[i].data(), weights_[i].numel(), copies_[i].data()});
  std::sort(g_ranges.begin(), g_ranges.end(), [](const CopyRange& a, const CopyRange& b) { return a.begin < b.begin; });
  g_active_copies = this;
}

Bf16WeightCopies::~Bf16WeightCopies() {
  g_ranges.clear();
  g_active_copies = nullptr;
}

void Bf16WeightCopies::refresh() {
  for (size_t i = 0; i < weights_.size(); ++i) round_to_bf16(weights_[i].data(), weights_[i].numel(), copies_[i].data());
  ++refreshes_;
}

void refresh_bf16_weight_copies() {
  if (g_active_copies) g_active_copies->refresh();
}

const uint16_t* find_bf16_copy(const float* p, int64_t n) {
  auto it = std::upper_bound(g_ranges.begin(), g_ranges.end(), p,
                             [](const float* q, const CopyRange& r) { return q < r.begin; });
  if (it == g_ranges.begin()) return nullptr;
  --it;
  const auto offset = static_cast<int64_t>((reinterpret_cast<uintptr_t>(p) - reinterpret_cast<uintptr_t>(it->begin)) /
                                          sizeof(float));
  if (offset + n > it->n) return nullptr;
  return it->copy + offset;
}

}  // namespace heed
