// The matmul dispatch behind every product of tensor/ops: oneDNN matmul primitives cached by
// layout or shape, the runtime-sized and row-chunked paths, and prepacked weights. The autograd
// ops built on it (matmul, linear and their gradients) are in linalg.cpp.
#include "tensor/ops/matmul_dispatch.hpp"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>

#include "tensor/dnnl_context.hpp"
#include "tensor/ops.hpp"
#include "tensor/ops/row_pieces.hpp"
#include "tensor/precision.hpp"
#include "tensor/quantize.hpp"
#include "util/error.hpp"

namespace heed {
namespace {
using dnnl::memory;

// A primitive with its memory objects and argument map, built once per key: a call only points
// the memory objects at this call's buffers (set_data_handle), so no dnnl::memory or map is
// created per call.
struct MatmulEntry {
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul prim;
  memory src, weights, dst, bias;
  std::unordered_map<int, memory> args;
};

// C += A·B instead of C = A·B: a sum post-op.
dnnl::primitive_attr accumulate_attr(bool accumulate) {
  dnnl::primitive_attr attr;
  if (accumulate) {
    dnnl::post_ops po;
    po.append_sum(1.f);
    attr.set_post_ops(po);
  }
  return attr;
}

// The primitive for `desc` (with a sum post-op when accumulating) and its memory objects.
MatmulEntry make_matmul_entry(const dnnl::matmul::desc& desc, bool with_bias, bool accumulate) {
  dnnl::matmul::primitive_desc pd(desc, accumulate_attr(accumulate), dnnl_ctx::engine());
  auto& eng = dnnl_ctx::engine();
  MatmulEntry entry{pd,
                    dnnl::matmul(pd),
                    memory(pd.src_desc(), eng, nullptr),
                    memory(pd.weights_desc(), eng, nullptr),
                    memory(pd.dst_desc(), eng, nullptr),
                    memory(),
                    {}};
  entry.args = {{DNNL_ARG_SRC, entry.src}, {DNNL_ARG_WEIGHTS, entry.weights}, {DNNL_ARG_DST, entry.dst}};
  if (with_bias) {
    entry.bias = memory(pd.bias_desc(), eng, nullptr);
    entry.args.emplace(DNNL_ARG_BIAS, entry.bias);
  }
  return entry;
}

// Logical [batch, rows, cols] view of a dense tensor that may be read transposed.
struct Operand {
  int64_t batch, rows, cols;
  memory::dims dims, strides;
};

// A dense [b, r, c] (b = 1: [r, c]) matrix read transposed or not; batched: 3-D dims.
Operand operand(int64_t b, int64_t r, int64_t c, bool trans, bool batched) {
  Operand o;
  o.batch = b;
  o.rows = trans ? c : r;
  o.cols = trans ? r : c;
  memory::dims strides2 = trans ? memory::dims{1, c} : memory::dims{c, 1};
  if (!batched) {
    o.dims = {o.rows, o.cols};
    o.strides = strides2;
  } else {
    o.dims = {b, o.rows, o.cols};
    o.strides = {r * c, strides2[0], strides2[1]};
  }
  return o;
}

Operand operand(const Tensor& t, bool trans, bool batched) {
  if (t.ndim() != 2 && t.ndim() != 3) throw Error("matmul needs 2-D or 3-D operands, got " + shape_str(t.shape()));
  return operand(t.ndim() == 3 ? t.dim(0) : 1, t.dim(-2), t.dim(-1), trans, batched);
}

// The two operands as the product reads them: the fp32 tensors' buffers, or in bf16
// (tensor/precision.hpp) a weight's bf16 copy or a fresh rounding of the tensor. Same layout.
struct Inputs {
  const void* a;
  const void* b;
  memory::data_type type;
  // The element `offset` elements after p.
  const void* at(const void* p, int64_t offset) const {
    return static_cast<const char*>(p) + offset * static_cast<int64_t>(memory::data_type_size(type));
  }
};

const void* bf16_operand(const Tensor& t, std::vector<uint16_t>& scratch) {
  if (const uint16_t* copy = find_bf16_copy(t.data(), t.numel())) return copy;
  scratch.resize(static_cast<size_t>(t.numel()));
  round_to_bf16(t.data(), t.numel(), scratch.data());
  return scratch.data();
}

Inputs inputs(const Tensor& a, const Tensor& b, const uint16_t* a16, const uint16_t* b16) {
  if (matmul_precision() == MatmulPrecision::fp32) return {a.data(), b.data(), memory::data_type::f32};
  thread_local std::vector<uint16_t> a_scratch, b_scratch;
  return {a16 ? a16 : bf16_operand(a, a_scratch), b16 ? b16 : bf16_operand(b, b_scratch), memory::data_type::bf16};
}

// Appends dims' raw bytes (and their count) to a cache key: building the key costs one small
// allocation, where decimal formatting cost about as much as a small matmul's setup.
void append_dims(std::string& key, const memory::dims& d) {
  key.push_back(static_cast<char>(d.size()));
  key.append(reinterpret_cast<const char*>(d.data()), d.size() * sizeof(memory::dim));
}

void append_type(std::string& key, memory::data_type type) { key.push_back(type == memory::data_type::f32 ? 'f' : 'h'); }

memory::desc f32_desc(const memory::dims& dims, const memory::dims& strides) {
  return memory::desc(dims, memory::data_type::f32, strides);
}

void* writable(const void* p) { return const_cast<void*>(p); }

// A 2-D product C = op(A)·op(B) (+ bias) (+= C) whose sizes are given when it runs: one primitive
// per layout serves every shape. Training batches bring a new row count almost every step, and
// an exact-shape primitive costs 0.4–0.9 ms to create (oneDNN generates its kernels), about 20 ms
// per Transformer step. oneDNN runs runtime-sized products with its gemm:jit kernels instead of
// brgemm: faster on these models' short reductions (K = 256), slower on long ones (K = 1024),
// and a little faster per training step in all, besides the creation it saves.
void run_runtime_sized_matmul(const Tensor& c, const void* a, const Operand& oa, bool ta, const void* b,
                              const Operand& ob, bool tb, const Tensor* bias, bool accumulate,
                              memory::data_type type) {
  struct Entry {
    dnnl::matmul prim;
  };
  const memory::dim any = DNNL_RUNTIME_DIM_VAL;
  auto layout = [any](bool trans) { return trans ? memory::dims{1, any} : memory::dims{any, 1}; };
  std::string key = "matmul_any_size#";
  key += ta ? 't' : '-';
  key += tb ? 't' : '-';
  key += bias ? 'b' : '-';
  key += accumulate ? 'a' : '-';
  append_type(key, type);
  auto& e = dnnl_ctx::cached<Entry>(key, [&] {
    const memory::dims dims{any, any};
    memory::desc amd(dims, type, layout(ta)), bmd(dims, type, layout(tb)), cmd = f32_desc(dims, layout(false));
    auto desc =
        bias ? dnnl::matmul::desc(amd, bmd, f32_desc({1, any}, layout(false)), cmd) : dnnl::matmul::desc(amd, bmd, cmd);
    return Entry{dnnl::matmul(dnnl::matmul::primitive_desc(desc, accumulate_attr(accumulate), dnnl_ctx::engine()))};
  });
  auto& eng = dnnl_ctx::engine();
  const int64_t n = ob.cols;
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, memory({oa.dims, type, oa.strides}, eng, writable(a))},
                                       {DNNL_ARG_WEIGHTS, memory({ob.dims, type, ob.strides}, eng, writable(b))},
                                       {DNNL_ARG_DST, memory(f32_desc({oa.rows, n}, {n, 1}), eng, c.data())}};
  if (bias) args.emplace(DNNL_ARG_BIAS, memory(f32_desc({1, n}, {n, 1}), eng, bias->data()));
  e.prim.execute(dnnl_ctx::stream(), args);
  dnnl_ctx::stream().wait();
}

// Weight gradients dW = gᵀ·x sum over a batch's token rows, a count that changes with every
// batch. gemm:jit, which serves runtime sizes, runs this layout (A read transposed) 10–35 %
// slower than brgemm at these models' weight shapes (measured: 219–241 against 271–297 GFLOP/s
// for [1536 or 2048, 2000]ᵀ·[2000, 256 or 512]), and brgemm needs exact shapes. So the rows go
// in fixed chunks through one exact-shape primitive per weight shape, and only the remainder
// (fewer than kReductionChunk rows) through the runtime-sized one.
constexpr int64_t kReductionChunk = 512;

// c [m, n] (+)= aᵀ·b for a [k, m], b [k, n].
void run_chunked_transposed_a(const Tensor& c, const Inputs& in, int64_t k, int64_t m, int64_t n, bool accumulate) {
  auto chunk_entry = [&](bool acc) -> MatmulEntry& {
    std::string key = "matmul_transposed_a_chunk#";
    append_dims(key, {m, n});
    key.push_back(acc ? 'a' : '-');
    append_type(key, in.type);
    return dnnl_ctx::cached<MatmulEntry>(key, [&] {
      return make_matmul_entry(dnnl::matmul::desc(memory::desc({m, kReductionChunk}, in.type, {1, m}),
                                                  memory::desc({kReductionChunk, n}, in.type, {n, 1}),
                                                  f32_desc({m, n}, {n, 1})),
                               false, acc);
    });
  };
  int64_t k0 = 0;
  for (; k0 + kReductionChunk <= k; k0 += kReductionChunk) {
    MatmulEntry& e = chunk_entry(accumulate || k0 > 0);
    e.src.set_data_handle(writable(in.at(in.a, k0 * m)));
    e.weights.set_data_handle(writable(in.at(in.b, k0 * n)));
    e.dst.set_data_handle(c.data());
    e.prim.execute(dnnl_ctx::stream(), e.args);
  }
  dnnl_ctx::stream().wait();
  if (k0 == k) return;
  run_runtime_sized_matmul(c, in.at(in.a, k0 * m), operand(1, k - k0, m, true, false), true, in.at(in.b, k0 * n),
                           operand(1, k - k0, n, false, false), false, nullptr, accumulate || k0 > 0, in.type);
}

// x·Wᵀ with a long reduction (K ≥ kLongReduction): gemm:jit runs it 8–15 % below brgemm
// (`heed bench ops`, [2000, 1024 or 2048]·[·, 256 or 512]: 231–259 against 263–283 GFLOP/s; the
// GRU's attention keys and readout, the Transformer's second feed-forward layer). At K = 256 or
// 512 it is not slower. Rows are independent, so they go in fixed chunks through one exact-shape
// primitive per weight shape, and only the remainder through the runtime-sized one.
// The same holds for wide outputs with a bias (vocabulary projections, N ≥ kWideOutput): 263–272
// against 292–300 GFLOP/s for [512–2000, 256]·[256, 8000] + b; without the bias it is not slower.
constexpr int64_t kLongReduction = 1024;
constexpr int64_t kRowChunk = 512;

// c [m, n] (+)= x·wᵀ (+ bias) for x [m, k], w [n, k].
void run_chunked_rows(const Tensor& c, const Inputs& in, int64_t m, int64_t k, int64_t n, const Tensor* bias,
                      bool accumulate) {
  std::string key = "matmul_row_chunk#";
  append_dims(key, {k, n});
  key.push_back(bias ? 'b' : '-');
  key.push_back(accumulate ? 'a' : '-');
  append_type(key, in.type);
  MatmulEntry& e = dnnl_ctx::cached<MatmulEntry>(key, [&] {
    const memory::desc xmd({kRowChunk, k}, in.type, {k, 1}), wmd({k, n}, in.type, {1, k}),
        cmd = f32_desc({kRowChunk, n}, {n, 1});
    return make_matmul_entry(
        bias ? dnnl::matmul::desc(xmd, wmd, f32_desc({1, n}, {n, 1}), cmd) : dnnl::matmul::desc(xmd, wmd, cmd),
        bias != nullptr, accumulate);
  });
  e.weights.set_data_handle(writable(in.b));
  if (bias) e.bias.set_data_handle(bias->data());
  int64_t r0 = 0;
  for (; r0 + kRowChunk <= m; r0 += kRowChunk) {
    e.src.set_data_handle(writable(in.at(in.a, r0 * k)));
    e.dst.set_data_handle(c.data() + r0 * n);
    e.prim.execute(dnnl_ctx::stream(), e.args);
  }
  dnnl_ctx::stream().wait();
  if (r0 == m) return;
  run_runtime_sized_matmul(c.slice(r0, m), in.at(in.a, r0 * k), operand(1, m - r0, k, false, false), false, in.b,
                           operand(1, n, k, true, false), true, bias, accumulate, in.type);
}

}  // namespace

RoundedOperand::RoundedOperand(const Tensor& t) {
  if (matmul_precision() != MatmulPrecision::bf16) return;
  if (!t.is_contiguous()) throw Error("a rounded operand must be dense, got " + shape_str(t.shape()));
  bits_ = std::make_shared_for_overwrite<uint16_t[]>(static_cast<size_t>(t.numel()));
  round_to_bf16(t.data(), t.numel(), bits_.get());
}

void run_matmul(const Tensor& c, const Tensor& a, bool ta, const Tensor& b, bool tb, const Tensor* bias,
                bool accumulate, const uint16_t* a16, const uint16_t* b16) {
  const bool batched = a.ndim() == 3 || b.ndim() == 3;
  Operand oa = operand(a, ta, batched), ob = operand(b, tb, batched);
  if (oa.cols != ob.rows || (ob.batch != 1 && ob.batch != oa.batch))
    throw Error("matmul shapes " + shape_str(a.shape()) + (ta ? "ᵀ" : "") + " x " + shape_str(b.shape()) +
                (tb ? "ᵀ" : "") + " do not match");
  if (batched && a.ndim() == 2) throw Error("matmul: a 2-D left operand with a 3-D right operand");
  if (!a.is_contiguous() || !b.is_contiguous()) throw Error("matmul: operands must be dense");
  memory::dims cdims = batched ? memory::dims{oa.batch, oa.rows, ob.cols} : memory::dims{oa.rows, ob.cols};
  if (c.shape() != Shape(cdims.begin(), cdims.end()))
    throw Error("matmul result " + shape_str(Shape(cdims.begin(), cdims.end())) + " into " + shape_str(c.shape()));
  const Inputs in = inputs(a, b, a16, b16);
  if (!batched) {
    if (ta && !tb && !bias && oa.cols >= kReductionChunk)
      run_chunked_transposed_a(c, in, a.dim(0), a.dim(1), b.dim(1), accumulate);
    else if (!ta && tb && (oa.cols >= kLongReduction || (bias && ob.cols >= kWideOutput)) && oa.rows >= kRowChunk)
      run_chunked_rows(c, in, a.dim(0), a.dim(1), b.dim(0), bias, accumulate);
    else
      run_runtime_sized_matmul(c, in.a, oa, ta, in.b, ob, tb, bias, accumulate, in.type);
    return;
  }
  // Batched products (attention) keep exact-shape primitives: measured, the runtime-sized ones
  // were no faster there.
  memory::dims cstrides{oa.rows * ob.cols, ob.cols, 1};
  const memory::dims bias_dims{1, 1, ob.cols}, bias_strides{ob.cols, ob.cols, 1};

  std::string key;
  key.reserve(160);
  key = "matmul#";
  for (const auto* d : {&oa.dims, &oa.strides, &ob.dims, &ob.strides, &cdims, &cstrides}) append_dims(key, *d);
  key.push_back(bias ? 'b' : '-');
  key.push_back(accumulate ? 'a' : '-');
  append_type(key, in.type);
  auto& e = dnnl_ctx::cached<MatmulEntry>(key, [&] {
    memory::desc amd(oa.dims, in.type, oa.strides);
    memory::desc bmd(ob.dims, in.type, ob.strides);
    memory::desc cmd(cdims, memory::data_type::f32, cstrides);
    auto desc = bias ? dnnl::matmul::desc(amd, bmd, memory::desc(bias_dims, memory::data_type::f32, bias_strides), cmd)
                     : dnnl::matmul::desc(amd, bmd, cmd);
    return make_matmul_entry(desc, bias != nullptr, accumulate);
  });
  e.src.set_data_handle(writable(in.a));
  e.weights.set_data_handle(writable(in.b));
  e.dst.set_data_handle(c.data());
  if (bias) e.bias.set_data_handle(bias->data());
  e.prim.execute(dnnl_ctx::stream(), e.args);
  dnnl_ctx::stream().wait();
}

void matmul_into(const Tensor& c, const Tensor& a, const Tensor& b, bool trans_a, bool trans_b, bool accumulate) {
  run_matmul(c, a.contiguous(), trans_a, b.contiguous(), trans_b, nullptr, accumulate);
}

namespace {
constexpr int64_t kPackingRows = 32;  // the row count whose primitive's layout pack_weight writes

// Products on packed weights (decoding) need exact-shape primitives: their rows go in row pieces
// (row_pieces.hpp), so that the primitives per weight shape are at most 31.

// The matmul for x [M, I] · (packed wᵀ) [I, O] (+ bias), x and w in `type` (f32 or bf16).
MatmulEntry& packed_matmul(int64_t M, int64_t in, int64_t out, bool with_bias, bool accumulate,
                           memory::data_type type) {
  std::string key = "matmul_packed#";
  append_dims(key, {M, in, out});
  key.push_back(with_bias ? 'b' : '-');
  key.push_back(accumulate ? 'a' : '-');
  append_type(key, type);
  return dnnl_ctx::cached<MatmulEntry>(key, [&] {
    const auto f32 = memory::data_type::f32;
    memory::desc amd({M, in}, type, memory::format_tag::ab), cmd({M, out}, f32, memory::format_tag::ab);
    memory::desc bmd({in, out}, type, memory::format_tag::any), bias_md({1, out}, f32, memory::format_tag::ab);
    auto desc = with_bias ? dnnl::matmul::desc(amd, bmd, bias_md, cmd) : dnnl::matmul::desc(amd, bmd, cmd);
    return make_matmul_entry(desc, with_bias, accumulate);
  });
}
}  // namespace

struct PackedLayouts {
  memory::desc packed_desc;  // the layout of PackedWeight::packed
  std::mutex mutex;          // guards copies
  std::vector<std::pair<memory::desc, Tensor>> copies;
};

namespace {

// wᵀ [I, O] as written in `packed_desc` into a new buffer: from the fp32 weight (its strided
// view; into bf16 a reorder rounds to nearest even, as round_to_bf16), or from the int8 rows.
Tensor pack_into(const PackedWeight& w, const memory::desc& packed_desc) {
  Tensor packed = Tensor::empty({static_cast<int64_t>((packed_desc.get_size() + sizeof(float) - 1) / sizeof(float))});
  memory plain_mem =
      w.is_int8()
          ? memory(memory::desc({w.in, w.out}, memory::data_type::s8, memory::dims{1, w.in}), dnnl_ctx::engine(),
                   w.int8_rows.data())  // q [O, I] row-major read as [I, O]
          : dnnl_ctx::memory({w.in, w.out}, {w.plain.strides()[1], w.plain.strides()[0]}, w.plain.data());
  memory packed_mem(packed_desc, dnnl_ctx::engine(), packed.data());
  dnnl::reorder(plain_mem, packed_mem).execute(dnnl_ctx::stream(), plain_mem, packed_mem);
  dnnl_ctx::stream().wait();
  return packed;
}

// Fills w.packed in the layout of `packed_desc`.
void pack(PackedWeight& w, const memory::desc& packed_desc) {
  w.packed = pack_into(w, packed_desc);
  w.layouts = std::make_shared<PackedLayouts>();
  w.layouts->packed_desc = packed_desc;
}

// w's packed weights in the layout `desc`: w.packed, or a copy made at the first use of another.
void* packed_in(const PackedWeight& w, const memory::desc& desc) {
  PackedLayouts& layouts = *w.layouts;
  if (desc == layouts.packed_desc) return w.packed.data();
  const std::lock_guard<std::mutex> lock(layouts.mutex);
  for (const auto& [copy_desc, copy] : layouts.copies)
    if (copy_desc == desc) return copy.data();
  layouts.copies.emplace_back(desc, pack_into(w, desc));
  return layouts.copies.back().second.data();
}

}  // namespace

PackedWeight pack_weight(const Tensor& w) {
  if (w.ndim() != 2) throw Error("pack_weight: a 2-D weight [out, in] expected, got " + shape_str(w.shape()));
  PackedWeight p;
  p.plain = w;  // may be a strided view (wᵀ for a backward product): the reorder reads its strides
  p.out = w.dim(0);
  p.in = w.dim(1);
  p.bf16 = matmul_precision() == MatmulPrecision::bf16;
  const auto type = p.bf16 ? memory::data_type::bf16 : memory::data_type::f32;
  pack(p, packed_matmul(kPackingRows, p.in, p.out, false, false, type).pd.weights_desc());
  return p;
}

namespace {

// The int8 product (q_x + 128) [M, I] · (packed q_wᵀ) [I, O] → f32, scaled per output column by
// the weight scales (a runtime argument). The activations go in as u8 with a zero point of 128:
// u8 · s8 is the native form of the int8 instructions (with or without VNNI), where s8 · s8 would
// make oneDNN shift and compensate inside. Cached by shape like packed_matmul.
struct Int8Entry {
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul prim;
  memory src, weights, dst, scales;
  std::unordered_map<int, memory> args;
};

Int8Entry& int8_matmul(int64_t M, int64_t in, int64_t out) {
  std::string key = "matmul_u8s8#";
  append_dims(key, {M, in, out});
  return dnnl_ctx::cached<Int8Entry>(key, [&] {
    const auto u8 = memory::data_type::u8, s8 = memory::data_type::s8, f32 = memory::data_type::f32;
    memory::desc amd({M, in}, u8, memory::format_tag::ab), cmd({M, out}, f32, memory::format_tag::ab);
    memory::desc bmd({in, out}, s8, memory::format_tag::any);
    dnnl::primitive_attr attr;
    attr.set_output_scales(1 << 1, {DNNL_RUNTIME_F32_VAL});
    auto& eng = dnnl_ctx::engine();
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(amd, bmd, cmd), attr, eng);
    Int8Entry e{pd,
                dnnl::matmul(pd),
                memory(pd.src_desc(), eng, nullptr),
                memory(pd.weights_desc(), eng, nullptr),
                memory(pd.dst_desc(), eng, nullptr),
                memory(memory::desc({out}, f32, memory::format_tag::a), eng, nullptr),
                {}};
    e.args = {{DNNL_ARG_SRC, e.src},
              {DNNL_ARG_WEIGHTS, e.weights},
              {DNNL_ARG_DST, e.dst},
              {DNNL_ARG_ATTR_OUTPUT_SCALES, e.scales}};
    return e;
  });
}

// y = x · wᵀ (+ bias, contiguous, w.out values) on int8 weights: x quantized per row, an exact
// int8 product, rescaled:
// y[m, o] = s_x[m] · (s_w[o] · Σ_i (q_x[m, i] + 128) q_w[o, i] − 128 · s_w[o] · Σ_i q_w[o, i]) + b[o].
void linear_int8_into(const Tensor& y, const Tensor& x, const PackedWeight& w, const Tensor& bias, bool accumulate) {
  const int64_t M = x.numel() / w.in;
  thread_local std::vector<int8_t> qx;
  thread_local std::vector<uint8_t> ux;
  thread_local std::vector<float> sx;
  qx.resize(static_cast<size_t>(M * w.in));
  ux.resize(qx.size());
  sx.resize(static_cast<size_t>(M));
  for (int64_t m = 0; m < M; ++m) sx[m] = quantize_row(x.data() + m * w.in, w.in, qx.data() + m * w.in);
  for (size_t i = 0; i < qx.size(); ++i) ux[i] = static_cast<uint8_t>(qx[i] + 128);
  const Tensor product = accumulate ? Tensor::empty({M, w.out}) : y;
  for_row_pieces(M, [&](int64_t r0, int64_t rows) {
    auto& e = int8_matmul(rows, w.in, w.out);
    e.src.set_data_handle(ux.data() + r0 * w.in);
    e.weights.set_data_handle(packed_in(w, e.pd.weights_desc()));
    e.dst.set_data_handle(product.data() + r0 * w.out);
    e.scales.set_data_handle(w.scales.data());
    e.prim.execute(dnnl_ctx::stream(), e.args);
  });
  dnnl_ctx::stream().wait();
  const float* b = bias.defined() ? bias.data() : nullptr;
  float* out = y.data();
  const float* p = product.data();
  const float* zero_point = w.zero_point_sums.data();
  for (int64_t m = 0; m < M; ++m)
    for (int64_t o = 0; o < w.out; ++o) {
      const float v = (p[m * w.out + o] - zero_point[o]) * sx[m] + (b ? b[o] : 0.f);
      out[m * w.out + o] = accumulate ? out[m * w.out + o] + v : v;
    }
}

}  // namespace

PackedWeight pack_weight_int8(const Tensor& w) {
  if (w.ndim() != 2) throw Error("pack_weight_int8: a 2-D weight [out, in] expected, got " + shape_str(w.shape()));
  const QuantizedRows q = quantize_rows(w, int8_weight_levels());
  PackedWeight p;
  p.out = q.rows;
  p.in = q.cols;
  p.int8_rows = Tensor::empty({static_cast<int64_t>((q.values.size() + sizeof(float) - 1) / sizeof(float))});
  std::memcpy(p.int8_rows.data(), q.values.data(), q.values.size());
  p.scales = Tensor::from_vector({p.out}, q.scales);
  std::vector<float> zero_point(static_cast<size_t>(p.out));
  for (int64_t o = 0; o < p.out; ++o) {
    int64_t sum = 0;
    for (int64_t i = 0; i < p.in; ++i) sum += q.values[o * p.in + i];
    zero_point[o] = 128.f * static_cast<float>(sum) * q.scales[o];
  }
  p.zero_point_sums = Tensor::from_vector({p.out}, zero_point);
  pack(p, int8_matmul(kPackingRows, p.in, p.out).pd.weights_desc());
  return p;
}

Tensor dequantized_weight(const PackedWeight& w) {
  if (!w.is_int8()) return w.plain.contiguous();
  QuantizedRows q;
  q.rows = w.out;
  q.cols = w.in;
  q.values.resize(static_cast<size_t>(w.out * w.in));
  std::memcpy(q.values.data(), w.int8_rows.data(), q.values.size());
  q.scales = w.scales.to_vector();
  return dequantize_rows(q);
}

Tensor linear(const Tensor& x, const PackedWeight& w, const Tensor& bias) {
  Shape out_shape = x.shape();
  out_shape.back() = w.out;
  Tensor y = Tensor::empty(out_shape);
  linear_into(y, x, w, bias);
  return y;
}

void linear_into(const Tensor& y, const Tensor& x, const PackedWeight& w, const Tensor& bias, bool accumulate) {
  Tensor xv = x.contiguous();
  if (xv.dim(-1) != w.in || w.in == 0)
    throw Error("linear: input " + shape_str(xv.shape()) + " with a packed weight [" + std::to_string(w.out) + ", " +
                std::to_string(w.in) + "]");
  const int64_t M = xv.numel() / w.in;
  if (!y.is_contiguous() || y.numel() != M * w.out)
    throw Error("linear: result " + shape_str(y.shape()) + " for " + std::to_string(M) + " rows of " +
                std::to_string(w.out));
  // Checked for both paths (reshape throws unless it has w.out values), and kept alive here: a
  // strided bias's contiguous copy must outlive the products that read it.
  const Tensor bias_v = bias.defined() ? bias.contiguous().reshape({w.out}) : Tensor();
  if (w.is_int8()) {
    linear_int8_into(y, xv, w, bias_v, accumulate);
    return;
  }
  const memory::data_type type = w.bf16 ? memory::data_type::bf16 : memory::data_type::f32;
  thread_local std::vector<uint16_t> x16;
  const void* x_in = w.bf16 ? bf16_operand(xv, x16) : xv.data();
  const int64_t x_row_bytes = w.in * static_cast<int64_t>(memory::data_type_size(type));
  for_row_pieces(M, [&](int64_t r0, int64_t rows) {
    auto& e = packed_matmul(rows, w.in, w.out, bias.defined(), accumulate, type);
    e.src.set_data_handle(writable(static_cast<const char*>(x_in) + r0 * x_row_bytes));
    e.weights.set_data_handle(packed_in(w, e.pd.weights_desc()));
    e.dst.set_data_handle(y.data() + r0 * w.out);
    if (bias.defined()) e.bias.set_data_handle(bias_v.data());
    e.prim.execute(dnnl_ctx::stream(), e.args);
  });
  dnnl_ctx::stream().wait();
}

}  // namespace heed
