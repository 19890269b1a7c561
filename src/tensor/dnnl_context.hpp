#pragma once
// The oneDNN engine and stream, and our primitive cache: a training step looks its primitives up
// by a key (shape, transposes, attributes) and creates none after the first steps.
#include <oneapi/dnnl/dnnl.hpp>

#include <string>
#include <unordered_map>

#include "tensor/tensor.hpp"

namespace heed::dnnl_ctx {

dnnl::engine& engine();
dnnl::stream& stream();

// A memory object over a tensor's buffer with the given logical dims and strides.
dnnl::memory memory(const dnnl::memory::dims& dims, const dnnl::memory::dims& strides, float* data);
dnnl::memory dense_memory(const Tensor& t);  // dims = t's shape, dense strides
dnnl::memory::dims dims_of(const Shape& shape);

// Cached primitive by key and thread count; `make` runs only on a miss. Thread-local like the
// tape (entries may hold memory objects that a call re-points at its buffers, so threads must
// not share them).
template <class Primitive, class PrimitiveDesc>
struct Cached {
  PrimitiveDesc pd;
  Primitive prim;
};

struct PrimitiveCache {
  std::unordered_map<std::string, std::shared_ptr<void>> entries;
  size_t misses = 0;
};
PrimitiveCache& cache();

template <class Entry, class Make>
Entry& cached(const std::string& key, Make&& make) {
  auto& c = cache();
  auto it = c.entries.find(key);
  if (it == c.entries.end()) {
    ++c.misses;
    it = c.entries.emplace(key, std::make_shared<Entry>(make())).first;
  }
  return *static_cast<Entry*>(it->second.get());
}

// Primitive creations so far (tests assert a training step creates none after warm-up).
size_t primitive_misses();

// The primitives this thread holds, and dropping them all. Each new shape brings primitives, so a
// long-running decoder (a server's batches come in ever new shapes) drops them once they are too
// many, between batches: no primitive may be in use then.
size_t cached_primitives();
void drop_cached_primitives();

}  // namespace heed::dnnl_ctx
