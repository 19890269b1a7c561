#include "models/seq2seq.hpp"

#include <cstring>

#include "util/error.hpp"

namespace heed {

Tensor EncoderOutput::pad_mask() const {
  Tensor m = Tensor::zeros({batch, src_len});
  for (int b = 0; b < batch; ++b)
    for (int j = src_lengths[b]; j < src_len; ++j) m.data()[b * src_len + j] = 1.f;
  return m;
}

Tensor gather_rows(const Tensor& t, const std::vector<int32_t>& rows) {
  const Tensor src = t.contiguous();
  Shape shape = src.shape();
  const int64_t row = src.numel() / shape[0];
  shape[0] = static_cast<int64_t>(rows.size());
  Tensor out = Tensor::empty(shape);
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] < 0 || rows[i] >= src.dim(0))
      throw Error("reorder: row " + std::to_string(rows[i]) + " of " + std::to_string(src.dim(0)));
    std::memcpy(out.data() + i * row, src.data() + rows[i] * row, row * sizeof(float));
  }
  return out;
}

std::vector<int32_t> gather_rows(const std::vector<int32_t>& values, const std::vector<int32_t>& rows) {
  std::vector<int32_t> out(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] < 0 || static_cast<size_t>(rows[i]) >= values.size())
      throw Error("reorder: row " + std::to_string(rows[i]) + " of " + std::to_string(values.size()));
    out[i] = values[rows[i]];
  }
  return out;
}

}  // namespace heed
