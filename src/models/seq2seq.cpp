#include "models/seq2seq.hpp"

namespace heed {

Tensor EncoderOutput::pad_mask() const {
  Tensor m = Tensor::zeros({batch, src_len});
  for (int b = 0; b < batch; ++b)
    for (int j = src_lengths[b]; j < src_len; ++j) m.data()[b * src_len + j] = 1.f;
  return m;
}

}  // namespace heed
