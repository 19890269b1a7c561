#pragma once
// Tensor: an n-dimensional fp32 array on reference-counted storage. Views (reshape, slices along
// the first axis, transposes) share the storage; strides make transposed views possible, and
// most ops require dense (contiguous) tensors so oneDNN runs its fast kernels on them.
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace heed {

// Only F32 today; the field exists so bf16 weights and activations can be added later.
enum class DType : uint8_t { F32 };

using Shape = std::vector<int64_t>;

std::string shape_str(const Shape& shape);
int64_t shape_numel(const Shape& shape);

class Storage {
 public:
  explicit Storage(size_t bytes);  // 64-byte aligned, uninitialised
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void* raw_;   // what malloc returned
  void* data_;  // raw_ rounded up to 64 bytes
  size_t bytes_;
};

class Tensor {
 public:
  Tensor() = default;
  static Tensor empty(const Shape& shape);
  static Tensor zeros(const Shape& shape);
  static Tensor full(const Shape& shape, float value);
  static Tensor from_vector(const Shape& shape, const std::vector<float>& values);

  bool defined() const { return storage_ != nullptr; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  const Shape& strides() const { return strides_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  int64_t dim(int axis) const;  // negative axes count from the end
  int64_t numel() const { return shape_numel(shape_); }
  bool is_contiguous() const;

  float* data() const { return static_cast<float*>(storage_->data()) + offset_; }
  float item() const;                    // the value of a one-element tensor
  std::vector<float> to_vector() const;  // dense copy in row-major order

  // Views sharing storage.
  Tensor reshape(const Shape& shape) const;        // requires contiguous; one dim may be -1
  Tensor slice(int64_t begin, int64_t end) const;  // rows [begin, end) of the first axis
  Tensor transpose(int a, int b) const;            // swaps two axes (strided view)

  Tensor clone() const;       // dense deep copy
  Tensor contiguous() const;  // itself when dense, else a dense copy
  void fill(float value) const;
  void zero() const { fill(0.f); }
  void copy_from(const Tensor& src) const;  // same shape; src may be strided

 private:
  std::shared_ptr<Storage> storage_;
  int64_t offset_ = 0;  // in elements
  Shape shape_, strides_;
  DType dtype_ = DType::F32;
};

Shape contiguous_strides(const Shape& shape);

// Floats from which memory-bound work (fills, copies) is split between the threads: a serial
// one leaves the other thread waiting at the next parallel op.
constexpr int64_t kParallelMemory = 1 << 16;

}  // namespace heed
