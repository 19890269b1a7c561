#include "tensor/dnnl_context.hpp"

namespace heed::dnnl_ctx {

dnnl::engine& engine() {
  static dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}

dnnl::stream& stream() {
  static dnnl::stream s(engine());
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
  thread_local PrimitiveCache c;
  return c;
}

size_t primitive_misses() { return cache().misses; }

}  // namespace heed::dnnl_ctx
