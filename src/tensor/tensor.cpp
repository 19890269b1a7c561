#include "tensor/tensor.hpp"

#include <malloc.h>
#include <omp.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "util/error.hpp"

namespace heed {

std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size());
  int64_t s = 1;
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
    strides[i] = s;
    s *= shape[i];
  }
  return strides;
}

namespace {
// Training allocates and frees the same large activations every step. glibc serves blocks over
// 128 KiB with mmap and returns them with munmap, so every step would page-fault its memory in
// again (a fifth of a step's time in a profile). Keeping large blocks in the heap lets them be
// reused.
const bool g_malloc_tuned = [] {
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  return true;
}();

constexpr size_t kAlignment = 64;
}  // namespace

// Aligned by hand over plain malloc: glibc's aligned_alloc does not reuse a freed block of the
// same large size (it asks for size + alignment and finds the freed block too small), so the heap
// grows and every call faults fresh pages in (a 2048x8000 linear ran at a third of its speed).
Storage::Storage(size_t bytes) : bytes_(bytes) {
  (void)g_malloc_tuned;
  raw_ = std::malloc(bytes + kAlignment);
  if (!raw_) throw std::bad_alloc();
  const auto address = reinterpret_cast<uintptr_t>(raw_);
  data_ = reinterpret_cast<void*>((address + kAlignment - 1) / kAlignment * kAlignment);
}

Storage::~Storage() { std::free(raw_); }

Tensor Tensor::empty(const Shape& shape) {
  for (auto d : shape)
    if (d < 0) throw Error("tensor shape " + shape_str(shape) + " has a negative dimension");
  Tensor t;
  t.storage_ = std::make_shared<Storage>(shape_numel(shape) * sizeof(float));
  t.shape_ = shape;
  t.strides_ = contiguous_strides(shape);
  return t;
}

Tensor Tensor::zeros(const Shape& shape) {
  Tensor t = empty(shape);
  t.fill(0.f);
  return t;
}

Tensor Tensor::full(const Shape& shape, float value) {
  Tensor t = empty(shape);
  t.fill(value);
  return t;
}

Tensor Tensor::from_vector(const Shape& shape, const std::vector<float>& values) {
  if (static_cast<int64_t>(values.size()) != shape_numel(shape))
    throw Error("from_vector: " + std::to_string(values.size()) + " values for shape " + shape_str(shape));
  Tensor t = empty(shape);
  std::memcpy(t.data(), values.data(), values.size() * sizeof(float));
  return t;
}

int64_t Tensor::dim(int axis) const {
  int n = ndim();
  if (axis < 0) axis += n;
  if (axis < 0 || axis >= n) throw Error("axis out of range for shape " + shape_str(shape_));
  return shape_[axis];
}

bool Tensor::is_contiguous() const {
  int64_t s = 1;
  for (int i = ndim() - 1; i >= 0; --i) {
    if (shape_[i] != 1 && strides_[i] != s) return false;
    s *= shape_[i];
  }
  return true;
}

float Tensor::item() const {
  if (numel() != 1) throw Error("item() of a tensor of shape " + shape_str(shape_));
  return *data();
}

std::vector<float> Tensor::to_vector() const {
  Tensor dense = contiguous();
  return std::vector<float>(dense.data(), dense.data() + dense.numel());
}

Tensor Tensor::reshape(const Shape& shape) const {
  if (!is_contiguous()) throw Error("reshape of a non-contiguous tensor " + shape_str(shape_));
  Shape s = shape;
  int64_t known = 1;
  int infer = -1;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == -1) {
      if (infer >= 0) throw Error("reshape: more than one -1 in " + shape_str(shape));
      infer = static_cast<int>(i);
    } else if (s[i] < 0) {  // {-2, -2} has 4 elements by the product, and no meaning
      throw Error("reshape: a negative size in " + shape_str(shape));
    } else {
      known *= s[i];
    }
  }
  if (infer >= 0) s[infer] = known ? numel() / known : 0;
  if (shape_numel(s) != numel())
    throw Error("reshape " + shape_str(shape_) + " to " + shape_str(shape) + ": sizes differ");
  Tensor t = *this;
  t.shape_ = s;
  t.strides_ = contiguous_strides(s);
  return t;
}

Tensor Tensor::slice(int64_t begin, int64_t end) const {
  if (ndim() == 0 || begin < 0 || end > shape_[0] || begin > end)
    throw Error("slice [" + std::to_string(begin) + ", " + std::to_string(end) + ") of " + shape_str(shape_));
  Tensor t = *this;
  t.offset_ += begin * strides_[0];
  t.shape_[0] = end - begin;
  return t;
}

Tensor Tensor::transpose(int a, int b) const {
  int n = ndim();
  if (a < 0) a += n;
  if (b < 0) b += n;
  if (a < 0 || b < 0 || a >= n || b >= n) throw Error("transpose axes out of range for " + shape_str(shape_));
  Tensor t = *this;
  std::swap(t.shape_[a], t.shape_[b]);
  std::swap(t.strides_[a], t.strides_[b]);
  return t;
}

namespace {
// Copies a strided tensor element by element into a dense buffer (row-major order).
void gather_strided(const Tensor& src, float* dst) {
  const int n = src.ndim();
  const auto& shape = src.shape();
  const auto& strides = src.strides();
  const float* base = src.data();
  if (n == 0) {
    *dst = *base;
    return;
  }
  const int64_t total = src.numel();
  if (total == 0) return;
  const int64_t inner = shape[n - 1], inner_stride = strides[n - 1], rows = total / inner;
  // Rows of the last dimension; each thread copies a contiguous range of them.
#pragma omp parallel if (total >= kParallelMemory)
  {
    const int64_t threads = omp_get_num_threads(), me = omp_get_thread_num();
    const int64_t first = rows * me / threads, last = rows * (me + 1) / threads;
    std::vector<int64_t> idx(n, 0);
    for (int64_t i = n - 2, rest = first; i >= 0; --i) {  // the index of row `first`
      idx[i] = rest % shape[i];
      rest /= shape[i];
    }
    for (int64_t r = first; r < last; ++r) {
      int64_t off = 0;
      for (int i = 0; i < n - 1; ++i) off += idx[i] * strides[i];
      const float* p = base + off;
      float* out = dst + r * inner;
      if (inner_stride == 1)  // e.g. a permute that keeps the last axis: whole rows
        std::memcpy(out, p, inner * sizeof(float));
      else
        for (int64_t j = 0; j < inner; ++j) out[j] = p[j * inner_stride];
      for (int i = n - 2; i >= 0; --i) {
        if (++idx[i] < shape[i]) break;
        idx[i] = 0;
      }
    }
  }
}
}  // namespace

Tensor Tensor::clone() const {
  Tensor t = empty(shape_);
  t.copy_from(*this);
  return t;
}

Tensor Tensor::contiguous() const { return is_contiguous() ? *this : clone(); }

void Tensor::fill(float value) const {
  if (!is_contiguous()) throw Error("fill of a non-contiguous tensor");
  float* p = data();
  const int64_t n = numel();
#pragma omp parallel for simd schedule(static) if (n >= kParallelMemory)
  for (int64_t i = 0; i < n; ++i) p[i] = value;
}

void Tensor::copy_from(const Tensor& src) const {
  if (src.shape() != shape_) throw Error("copy " + shape_str(src.shape()) + " into " + shape_str(shape_));
  if (!is_contiguous()) throw Error("copy into a non-contiguous tensor");
  if (src.is_contiguous()) {
    const int64_t n = numel();
    float* out = data();
    const float* in = src.data();
#pragma omp parallel for simd schedule(static) if (n >= kParallelMemory)
    for (int64_t i = 0; i < n; ++i) out[i] = in[i];
  } else {
    gather_strided(src, data());
  }
}

}  // namespace heed
