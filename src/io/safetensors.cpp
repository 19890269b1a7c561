#include "io/safetensors.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/text_lines.hpp"
#include "util/utf8.hpp"

namespace heed {

// The data are stored little-endian and copied as-is.
static_assert(std::endian::native == std::endian::little, "heed assumes a little-endian host");

namespace {

// The reference implementation refuses headers above 100 MB; so do we (a corrupt length
// must not make us allocate gigabytes).
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

const std::map<std::string, size_t>& dtype_sizes() {
  static const std::map<std::string, size_t> sizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"I16", 2}, {"U16", 2}, {"F16", 2},
      {"BF16", 2}, {"I32", 4}, {"U32", 4}, {"F32", 4},     {"I64", 8},     {"U64", 8}, {"F64", 8}};
  return sizes;
}

// The product of `shape` in elements; false on a negative dimension, or when the product of the
// non-zero dimensions exceeds int64 (a zero elsewhere must not hide it: SafeTensor::element_count
// multiplies in int64, in the shape's order).
bool checked_element_count(const std::vector<int64_t>& shape, uint64_t& count) {
  uint64_t nonzero = 1;
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0) return false;
    if (d == 0) {
      empty = true;
      continue;
    }
    if (nonzero > uint64_t(std::numeric_limits<int64_t>::max()) / uint64_t(d)) return false;
    nonzero *= uint64_t(d);
  }
  count = empty ? 0 : nonzero;
  return true;
}

// count * elem bytes, false when it does not fit.
bool checked_byte_count(uint64_t count, size_t elem, uint64_t& bytes) {
  if (elem != 0 && count > std::numeric_limits<uint64_t>::max() / elem) return false;
  bytes = count * elem;
  return true;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

template <typename T>
SafeTensor make_tensor(const char* dtype, std::vector<int64_t> shape, const T* values, size_t n) {
  SafeTensor t{dtype, std::move(shape), {}};
  if (uint64_t(t.element_count()) != n)
    throw Error(std::string("safetensors: ") + std::to_string(n) + " values do not fill shape " + shape_text(t.shape));
  t.data.resize(n * sizeof(T));
  if (n) std::memcpy(t.data.data(), values, n * sizeof(T));
  return t;
}

template <typename T>
std::vector<T> copy_values(const SafeTensor& t, const char* dtype) {
  if (t.dtype != dtype) throw Error("safetensors: tensor has dtype " + t.dtype + ", expected " + dtype);
  std::vector<T> values(t.data.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), t.data.data(), values.size() * sizeof(T));
  return values;
}

// Parses the header JSON, rejecting a name that appears twice (nlohmann would keep the last).
nlohmann::json parse_header(const std::string& text, const std::string& origin) {
  std::set<std::string> names;
  std::string duplicate;
  auto reject_duplicates = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    if (depth == 1 && event == nlohmann::json::parse_event_t::key) {
      const auto& name = parsed.get_ref<const std::string&>();
      if (!names.insert(name).second && duplicate.empty()) duplicate = name;
    }
    return true;
  };
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text, reject_duplicates);
  } catch (const nlohmann::json::exception& e) {
    throw Error(origin + ": safetensors header is not valid JSON: " + e.what());
  }
  if (!duplicate.empty()) throw Error(origin + ": safetensors header names tensor '" + duplicate + "' twice");
  if (!header.is_object()) throw Error(origin + ": safetensors header is not a JSON object");
  return header;
}

uint64_t offset_value(const nlohmann::json& v, const std::string& where) {
  if (!v.is_number_unsigned()) throw Error(where + ": data_offsets must be non-negative integers");
  return v.get<uint64_t>();
}

}  // namespace

int64_t SafeTensor::element_count() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

SafeTensor SafeTensor::from_f32(std::vector<int64_t> shape, const std::vector<float>& values) {
  return make_tensor("F32", std::move(shape), values.data(), values.size());
}
SafeTensor SafeTensor::from_i64(std::vector<int64_t> shape, const std::vector<int64_t>& values) {
  return make_tensor("I64", std::move(shape), values.data(), values.size());
}
SafeTensor SafeTensor::from_i32(std::vector<int64_t> shape, const std::vector<int32_t>& values) {
  return make_tensor("I32", std::move(shape), values.data(), values.size());
}
SafeTensor SafeTensor::from_bool(std::vector<int64_t> shape, const std::vector<bool>& values) {
  std::vector<uint8_t> bytes(values.begin(), values.end());
  return make_tensor("BOOL", std::move(shape), bytes.data(), bytes.size());
}

std::vector<float> SafeTensor::as_f32() const { return copy_values<float>(*this, "F32"); }
std::vector<int64_t> SafeTensor::as_i64() const { return copy_values<int64_t>(*this, "I64"); }
std::vector<int32_t> SafeTensor::as_i32() const { return copy_values<int32_t>(*this, "I32"); }
std::vector<bool> SafeTensor::as_bool() const {
  auto bytes = copy_values<uint8_t>(*this, "BOOL");
  return std::vector<bool>(bytes.begin(), bytes.end());
}

const SafeTensor& SafeTensorFile::at(const std::string& name) const {
  auto it = tensors.find(name);
  if (it == tensors.end()) throw Error("safetensors: no tensor named '" + name + "'");
  return it->second;
}

size_t dtype_size(const std::string& dtype) {
  auto it = dtype_sizes().find(dtype);
  if (it == dtype_sizes().end()) throw Error("unknown safetensors dtype '" + dtype + "'");
  return it->second;
}

SafeTensorFile parse_safetensors(const std::string& bytes, const std::string& origin) {
  if (bytes.size() < 8)
    throw Error(origin + ": not a safetensors file: " + std::to_string(bytes.size()) +
                " bytes, shorter than the 8-byte header length");
  uint64_t header_len = 0;
  std::memcpy(&header_len, bytes.data(), 8);
  const uint64_t available = bytes.size() - 8;
  if (header_len > kMaxHeaderBytes && header_len <= available)
    throw Error(origin + ": safetensors header length " + std::to_string(header_len) + " is over the 100 MB limit");
  if (header_len > available)
    throw Error(origin + ": safetensors header length " + std::to_string(header_len) + " exceeds the file (" +
                std::to_string(available) + " bytes after the length)");
  const std::string header_text = bytes.substr(8, header_len);
  if (find_invalid_utf8(header_text) != std::string::npos)
    throw Error(origin + ": safetensors header is not valid UTF-8");
  const nlohmann::json header = parse_header(header_text, origin);

  const uint64_t data_begin = 8 + header_len;
  const uint64_t data_size = bytes.size() - data_begin;
  SafeTensorFile file;
  struct Extent {
    uint64_t begin, end;
    std::string name;
  };
  std::vector<Extent> extents;
  for (const auto& [name, info] : header.items()) {
    const std::string where = origin + ": tensor '" + name + "'";
    if (name == "__metadata__") {
      if (!info.is_object()) throw Error(origin + ": __metadata__ must be a JSON object");
      for (const auto& [key, value] : info.items()) {
        if (!value.is_string()) throw Error(origin + ": __metadata__ value of '" + key + "' must be a string");
        file.metadata[key] = value.get<std::string>();
      }
      continue;
    }
    if (!info.is_object() || !info.contains("dtype") || !info.contains("shape") || !info.contains("data_offsets"))
      throw Error(where + ": needs an object with dtype, shape and data_offsets");
    SafeTensor t;
    if (!info["dtype"].is_string()) throw Error(where + ": dtype must be a string");
    t.dtype = info["dtype"].get<std::string>();
    if (!dtype_sizes().count(t.dtype)) throw Error(where + ": unknown dtype '" + t.dtype + "'");
    const auto& shape = info["shape"];
    if (!shape.is_array()) throw Error(where + ": shape must be an array");
    for (const auto& d : shape) {
      if (!d.is_number_unsigned() || d.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
        throw Error(where + ": shape must hold non-negative integers");
      t.shape.push_back(d.get<int64_t>());
    }
    const auto& offsets = info["data_offsets"];
    if (!offsets.is_array() || offsets.size() != 2) throw Error(where + ": data_offsets must be [begin, end]");
    const uint64_t begin = offset_value(offsets[0], where), end = offset_value(offsets[1], where);
    if (begin > end || end > data_size)
      throw Error(where + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                  "] out of range (the data section has " + std::to_string(data_size) + " bytes)");
    uint64_t count = 0, size = 0;
    if (!checked_element_count(t.shape, count) || !checked_byte_count(count, dtype_sizes().at(t.dtype), size) ||
        size != end - begin)
      throw Error(where + ": " + std::to_string(end - begin) + " bytes of data do not match " + t.dtype + " " +
                  shape_text(t.shape));
    t.data.assign(bytes.begin() + data_begin + begin, bytes.begin() + data_begin + end);
    extents.push_back({begin, end, name});
    file.tensors.emplace(name, std::move(t));
  }

  // The tensors must tile the data section exactly, as the reference implementation demands.
  std::sort(extents.begin(), extents.end(),
            [](const Extent& a, const Extent& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  uint64_t expected = 0;
  for (const auto& e : extents) {
    if (e.begin < expected)
      throw Error(origin + ": tensor '" + e.name + "' overlaps the previous tensor (starts at byte " +
                  std::to_string(e.begin) + ", before " + std::to_string(expected) + ")");
    if (e.begin > expected)
      throw Error(origin + ": hole in the data before tensor '" + e.name + "' (bytes " + std::to_string(expected) +
                  " to " + std::to_string(e.begin) + " unused)");
    expected = e.end;
  }
  if (expected != data_size)
    throw Error(origin + ": " + std::to_string(data_size - expected) +
                " bytes after the last tensor's data (the data section has " + std::to_string(data_size) +
                " bytes, the tensors use " + std::to_string(expected) + ")");
  return file;
}

SafeTensorFile read_safetensors(const std::string& path) { return parse_safetensors(read_file(path), path); }

std::string serialize_safetensors(const SafeTensorFile& file) {
  std::vector<const std::pair<const std::string, SafeTensor>*> order;
  for (const auto& entry : file.tensors) {
    const SafeTensor& t = entry.second;
    uint64_t count = 0, size = 0;
    if (entry.first == "__metadata__") throw Error("safetensors: '__metadata__' cannot name a tensor");
    if (!checked_element_count(t.shape, count) || !checked_byte_count(count, dtype_size(t.dtype), size) ||
        size != t.data.size())
      throw Error("safetensors: tensor '" + entry.first + "' has " + std::to_string(t.data.size()) +
                  " bytes, which do not match " + t.dtype + " " + shape_text(t.shape));
    order.push_back(&entry);
  }
  // Largest elements first: every offset is then a multiple of its tensor's element size.
  std::stable_sort(order.begin(), order.end(),
                   [](auto* a, auto* b) { return dtype_size(a->second.dtype) > dtype_size(b->second.dtype); });

  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!file.metadata.empty()) header["__metadata__"] = file.metadata;
  uint64_t offset = 0;
  for (const auto* entry : order) {
    const SafeTensor& t = entry->second;
    header[entry->first] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.data.size()}}};
    offset += t.data.size();
  }
  std::string header_text;
  try {
    header_text = header.dump();
  } catch (const nlohmann::json::exception& e) {  // e.g. a name or metadata that is not UTF-8
    throw Error(std::string("safetensors: cannot encode the header: ") + e.what());
  }
  header_text.append((8 - header_text.size() % 8) % 8, ' ');

  std::string out;
  out.reserve(8 + header_text.size() + offset);
  const uint64_t header_len = header_text.size();
  out.append(reinterpret_cast<const char*>(&header_len), 8);
  out += header_text;
  for (const auto* entry : order)
    out.append(reinterpret_cast<const char*>(entry->second.data.data()), entry->second.data.size());
  return out;
}

void write_safetensors(const std::string& path, const SafeTensorFile& file) {
  const std::string bytes = serialize_safetensors(file);
  AtomicFile out(path);
  out.write(bytes);
  out.commit();
}

}  // namespace heed
