#include "tensor/dnnl_context.hpp"

#include <omp.h>

#include <map>

namespace heed::dnnl_ctx {

dnnl::engine& engine() {
  static dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}

dnnl::stream& stream() {
  thread_local dnnl::stream s(engine());  // one per thread, like the primitive cache
  return s;
}

dnnl::memory::dims dims_of(const Shape& shape) { return dnnl::memory::dims(shape.begin(), shape.end()); }

dnnl::memory memory(const dnnl::memory::dims& dims, const dnnl::memory::dims& strides, float* data) {
  return dnnl::memory({dims, dnnl::memory::data_type::f32, strides}, engine(), data);
}

dnnl::memory dense_memory(const Tensor& t) {
  return memory(dims_of(t.shape()), dims_of(contiguous_strides(t.shape())), t.data());
}

PrimitiveCache& cache() {
  // A primitive keeps the thread count it was made with, so each count has its own entries: a
  // decoding worker's one-thread primitives never serve the training step that follows.
  thread_local std::map<int, PrimitiveCache> by_threads;
  return by_threads[omp_get_max_threads()];
}

size_t primitive_misses() { return cache().misses; }

size_t cached_primitives() { return cache().entries.size(); }

void drop_cached_primitives() { cache().entries.clear(); }

}  // namespace heed::dnnl_ctx
