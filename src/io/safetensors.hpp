#pragma once
// The safetensors file format (https://github.com/huggingface/safetensors), read and written
// without the Python package, so checkpoints open in PyTorch/NumPy tools and golden files from
// the PyTorch reference open here:
//
//   8 bytes   N, little-endian u64
//   N bytes   UTF-8 JSON, padded with spaces to a multiple of 8:
//             {"__metadata__": {"k": "v", ...},
//              "<name>": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...}
//   rest      raw little-endian tensor data, row-major; offsets count from the first byte
//             after the header and tile it exactly (no holes, no overlaps, nothing after).
//
// This module knows bytes, dtypes and shapes only; turning them into model tensors is the
// caller's business (io depends on util alone).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace heed {

struct SafeTensor {
  std::string dtype;           // "F32", "I64", "I32", "BOOL", "BF16", ... (see dtype_size)
  std::vector<int64_t> shape;  // row-major; a scalar is stored as [1] by convention
  std::vector<uint8_t> data;   // element_count() * dtype_size(dtype) bytes, little-endian

  int64_t element_count() const;  // product of shape (1 for shape [])

  static SafeTensor from_f32(std::vector<int64_t> shape, const std::vector<float>& values);
  static SafeTensor from_i64(std::vector<int64_t> shape, const std::vector<int64_t>& values);
  static SafeTensor from_i32(std::vector<int64_t> shape, const std::vector<int32_t>& values);
  static SafeTensor from_bool(std::vector<int64_t> shape, const std::vector<bool>& values);

  // Copies of the values; throw heed::Error when the dtype is not the one asked for.
  std::vector<float> as_f32() const;
  std::vector<int64_t> as_i64() const;
  std::vector<int32_t> as_i32() const;
  std::vector<bool> as_bool() const;
};

struct SafeTensorFile {
  std::map<std::string, SafeTensor> tensors;
  std::map<std::string, std::string> metadata;  // the "__metadata__" object

  // The tensor called `name`; throws heed::Error naming it when it is missing.
  const SafeTensor& at(const std::string& name) const;
};

// Bytes per element of a safetensors dtype; throws heed::Error for an unknown dtype.
size_t dtype_size(const std::string& dtype);

// Reads and validates the whole file; any defect is a heed::Error naming the file and the defect.
SafeTensorFile read_safetensors(const std::string& path);
// Parses an in-memory file image; `origin` names it in errors.
SafeTensorFile parse_safetensors(const std::string& bytes, const std::string& origin);

// The exact bytes of the file: metadata first, then the tensors ordered by element size
// (largest first, so every tensor is aligned to its element size) and by name; JSON padded with
// spaces to a multiple of 8. Throws heed::Error when a tensor's data does not match its shape.
std::string serialize_safetensors(const SafeTensorFile& file);
// serialize_safetensors written atomically (the old file survives any failure).
void write_safetensors(const std::string& path, const SafeTensorFile& file);

}  // namespace heed
