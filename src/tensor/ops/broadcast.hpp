#pragma once
// Numpy-style broadcasting of an operand `b` against the output shape `out` (b has at most as
// many axes; missing leading axes and axes of size 1 repeat). The output is walked in runs along
// its last axis; each run maps to an offset in b and a step of 1 (b varies) or 0 (b repeats).
#include <vector>

#include "tensor/tensor.hpp"
#include "util/error.hpp"

namespace heed {

// True when b (leading axes of size 1 aside) is a's trailing axes: b repeats whole for every row
// of a's leading axes, e.g. a bias [H, F] over activations [N, H, F]. Such a broadcast is a plain
// loop over rows, far cheaper than walking it in runs along the last axis.
inline bool repeats_over_rows(const Shape& a, const Shape& b) {
  size_t first = 0;
  while (first < b.size() && b[first] == 1) ++first;
  const size_t n = b.size() - first;
  if (n == 0 || n > a.size()) return false;
  for (size_t i = 0; i < n; ++i)
    if (b[first + i] != a[a.size() - n + i] || b[first + i] == 0) return false;
  return true;
}

class Broadcast {
 public:
  Broadcast(const Shape& out, const Shape& b) : out_(out) {
    const int n = static_cast<int>(out.size()), m = static_cast<int>(b.size());
    if (m > n) throw Error("cannot broadcast " + shape_str(b) + " to " + shape_str(out));
    b_strides_.assign(n, 0);
    Shape bs = contiguous_strides(b);
    for (int i = 0; i < m; ++i) {
      int oi = n - m + i;
      if (b[i] == out[oi])
        b_strides_[oi] = b[i] == 1 ? 0 : bs[i];
      else if (b[i] != 1)
        throw Error("cannot broadcast " + shape_str(b) + " to " + shape_str(out));
    }
  }

  // f(out_offset, b_offset, run_length, b_step) for every run along the last axis.
  template <class F>
  void for_each_run(F&& f) const {
    const int n = static_cast<int>(out_.size());
    if (n == 0) {
      f(0, 0, 1, 0);
      return;
    }
    const int64_t inner = out_[n - 1], total = shape_numel(out_);
    if (total == 0) return;
    std::vector<int64_t> idx(n, 0);
    for (int64_t off = 0; off < total; off += inner) {
      int64_t boff = 0;
      for (int i = 0; i < n - 1; ++i) boff += idx[i] * b_strides_[i];
      f(off, boff, inner, b_strides_[n - 1]);
      for (int i = n - 2; i >= 0; --i) {
        if (++idx[i] < out_[i]) break;
        idx[i] = 0;
      }
    }
  }

 private:
  Shape out_;
  Shape b_strides_;
};

}  // namespace heed
