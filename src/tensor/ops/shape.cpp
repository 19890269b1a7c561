// Shape ops: views where possible (reshape, row slices), dense copies otherwise (permute,
// concat, split). Pure data movement, so plain memcpy loops.
#include <cstring>

#include "tensor/ops.hpp"
#include "util/error.hpp"

namespace heed {
namespace {
// A strided view of t with its axes in the order `axes` (out axis i = t's axis axes[i]).
Tensor permuted_view(const Tensor& t, std::vector<int> axes) {
  const int n = t.ndim();
  if (static_cast<int>(axes.size()) != n)
    throw Error("permute: " + std::to_string(axes.size()) + " axes for " + shape_str(t.shape()));
  Tensor v = t;
  std::vector<int> current(n);
  for (int i = 0; i < n; ++i) current[i] = i;
  for (int i = 0; i < n; ++i) {
    int j = i;
    while (j < n && current[j] != axes[i]) ++j;
    if (j == n) throw Error("permute: invalid axes");
    if (j != i) {
      v = v.transpose(i, j);
      std::swap(current[i], current[j]);
    }
  }
  return v;
}

// (outer, inner) sizes of t around `axis`.
void around(const Shape& s, int axis, int64_t& outer, int64_t& inner) {
  outer = 1;
  inner = 1;
  for (int i = 0; i < axis; ++i) outer *= s[i];
  for (size_t i = axis + 1; i < s.size(); ++i) inner *= s[i];
}

int norm_axis(int axis, int n) {
  if (axis < 0) axis += n;
  if (axis < 0 || axis >= n) throw Error("axis out of range");
  return axis;
}
}  // namespace

Var reshape(const Var& a, const Shape& shape) {
  Var out(a.value().contiguous().reshape(shape), needs_grad({&a}));
  if (out.requires_grad()) {
    auto on = out.node_ptr();
    record_backward([a, on] {
      if (on->grad.defined()) a.accumulate_grad(on->grad.contiguous().reshape(a.shape()));
    });
  }
  return out;
}

Var permute(const Var& a, const std::vector<int>& axes) {
  Var out(permuted_view(a.value(), axes).clone(), needs_grad({&a}));
  if (out.requires_grad()) {
    auto on = out.node_ptr();
    std::vector<int> inverse(axes.size());
    for (size_t i = 0; i < axes.size(); ++i) inverse[axes[i]] = static_cast<int>(i);
    record_backward([a, on, inverse] {
      if (on->grad.defined()) a.accumulate_grad(permuted_view(on->grad, inverse).clone());
    });
  }
  return out;
}

namespace {
// rows × width floats from src (row stride src_stride) to dst (row stride dst_stride); with
// add, dst += src. Concat and split move column ranges of every row this way.
void copy_block(float* dst, int64_t dst_stride, const float* src, int64_t src_stride, int64_t rows, int64_t width,
                bool add) {
#pragma omp parallel for schedule(static) if (rows > 1 && rows * width >= kParallelMemory)
  for (int64_t r = 0; r < rows; ++r) {
    float* d = dst + r * dst_stride;
    const float* p = src + r * src_stride;
    if (add) {
#pragma omp simd
      for (int64_t j = 0; j < width; ++j) d[j] += p[j];
    } else {
      std::memcpy(d, p, width * sizeof(float));
    }
  }
}
// Concat's copies: for every outer row r and part i, the part's row (widths[i] floats) and
// columns [cols[i], cols[i] + widths[i]) of the whole's row r (stride whole_row); into the whole,
// or out of it (to_parts). A null part is skipped. One parallel region for all of them: a
// decoder's concat has a part per step, each too small to be worth a region of its own, and
// along the first axis (outer 1) each part is a single block.
void copy_parts(float* whole, int64_t whole_row, const std::vector<float*>& parts, const std::vector<int64_t>& widths,
                const std::vector<int64_t>& cols, int64_t outer, bool to_parts) {
  const int64_t count = static_cast<int64_t>(parts.size());
  const int64_t total = outer * whole_row;
#pragma omp parallel for collapse(2) schedule(static) if (total >= kParallelMemory && outer * count > 1)
  for (int64_t r = 0; r < outer; ++r)
    for (int64_t i = 0; i < count; ++i) {
      if (!parts[i]) continue;
      float* in_whole = whole + r * whole_row + cols[i];
      float* in_part = parts[i] + r * widths[i];
      if (to_parts)
        std::memcpy(in_part, in_whole, widths[i] * sizeof(float));
      else
        std::memcpy(in_whole, in_part, widths[i] * sizeof(float));
    }
}
}  // namespace

Var concat(const std::vector<Var>& parts, int axis) {
  if (parts.empty()) throw Error("concat of nothing");
  const int n = parts[0].ndim();
  axis = norm_axis(axis, n);
  Shape shape = parts[0].shape();
  shape[axis] = 0;
  for (const auto& p : parts) {
    if (p.ndim() != n) throw Error("concat: shapes " + shape_str(parts[0].shape()) + " and " + shape_str(p.shape()));
    Shape s = p.shape();
    shape[axis] += s[axis];
    s[axis] = 0;
    Shape ref = shape;
    ref[axis] = 0;
    if (s != ref) throw Error("concat: shapes " + shape_str(parts[0].shape()) + " and " + shape_str(p.shape()));
  }
  Tensor out = Tensor::empty(shape);
  int64_t outer, inner;
  around(shape, axis, outer, inner);
  const int64_t out_row = shape[axis] * inner;
  std::vector<Tensor> values;
  std::vector<int64_t> widths, cols;
  int64_t col = 0;
  std::vector<const Var*> inputs;
  for (const auto& p : parts) {
    values.push_back(p.value().contiguous());
    widths.push_back(p.dim(axis) * inner);
    cols.push_back(col);
    col += widths.back();
    inputs.push_back(&p);
  }
  const bool grad = needs_grad(inputs);  // every part: a watched one anywhere is counted
  std::vector<float*> part_data;
  for (const auto& v : values) part_data.push_back(v.data());
  copy_parts(out.data(), out_row, part_data, widths, cols, outer, false);
  Var result(out, grad);
  if (grad) {
    auto on = result.node_ptr();
    record_backward([parts, widths, cols, on, outer, out_row] {
      if (!on->grad.defined()) return;
      Tensor g = on->grad.contiguous();
      std::vector<Tensor> grads(parts.size());
      std::vector<float*> grad_data(parts.size(), nullptr);
      for (size_t i = 0; i < parts.size(); ++i)
        if (parts[i].requires_grad()) {
          grads[i] = Tensor::empty(parts[i].shape());
          grad_data[i] = grads[i].data();
        }
      copy_parts(g.data(), out_row, grad_data, widths, cols, outer, true);
      for (size_t i = 0; i < parts.size(); ++i)
        if (grads[i].defined()) parts[i].accumulate_grad(grads[i]);
    });
  }
  return result;
}

std::vector<Var> split(const Var& a, const std::vector<int64_t>& sizes, int axis) {
  const int n = a.ndim();
  axis = norm_axis(axis, n);
  int64_t total = 0;
  for (auto s : sizes) total += s;
  if (total != a.dim(axis)) throw Error("split of " + shape_str(a.shape()) + ": sizes do not add up");
  Tensor av = a.value().contiguous();
  int64_t outer, inner;
  around(av.shape(), axis, outer, inner);
  const int64_t row = a.dim(axis) * inner;
  std::vector<Var> outs;
  int64_t col = 0;
  for (auto s : sizes) {
    Shape shape = av.shape();
    shape[axis] = s;
    Tensor t = Tensor::empty(shape);
    const int64_t w = s * inner;
    copy_block(t.data(), w, av.data() + col, row, outer, w, false);
    Var part(t, needs_grad({&a}));
    if (part.requires_grad()) {
      auto on = part.node_ptr();
      record_backward([a, on, outer, row, col, w] {
        if (!on->grad.defined()) return;
        Tensor g = on->grad.contiguous();
        // Into the existing gradient's columns: the parts of a split do not each fill a whole one.
        if (a.grad().defined()) {
          copy_block(a.grad().data() + col, row, g.data(), w, outer, w, true);
          return;
        }
        Tensor d = Tensor::zeros(a.shape());
        copy_block(d.data() + col, row, g.data(), w, outer, w, false);
        a.accumulate_grad(d);
      });
    }
    outs.push_back(part);
    col += w;
  }
  return outs;
}

Var slice_rows(const Var& a, int64_t begin, int64_t end) {
  Var out(a.value().slice(begin, end), needs_grad({&a}));
  if (out.requires_grad()) {
    auto on = out.node_ptr();
    record_backward([a, on, begin] {
      if (!on->grad.defined()) return;
      // Add into the existing gradient's rows: a decoder slicing T steps stays O(T), not O(T²).
      if (a.grad().defined()) {
        add_into(a.grad().slice(begin, begin + on->grad.dim(0)), on->grad);
        return;
      }
      Tensor d = Tensor::zeros(a.shape());
      d.slice(begin, begin + on->grad.dim(0)).copy_from(on->grad);
      a.accumulate_grad(d);
    });
  }
  return out;
}

}  // namespace heed
