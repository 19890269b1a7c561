#pragma once
// One padded batch of sentence pairs, the unit models train on and translate. Plain data: the data
// pipeline fills it, the models read it. It lives below both, with the special ids it pads with.
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include "tokens/special_tokens.hpp"

namespace heed {

struct Batch {                       // one padded batch, row-major [B, S] / [B, T], padded with kPadId
  int size = 0;                      // B sentences
  int src_len = 0;                   // S = longest source incl. </s>
  int tgt_len = 0;                   // T = longest target incl. <s> (tgt_in) / </s> (tgt_out)
  std::vector<int32_t> src;          // [B*S] source ids + </s>, right-padded with 0
  std::vector<int32_t> src_lengths;  // [B] real source positions incl. </s>
  std::vector<int32_t> tgt_in;       // [B*T] <s> + target ids, padded
  std::vector<int32_t> tgt_out;      // [B*T] target ids + </s>, padded
  std::vector<int32_t> tgt_lengths;  // [B] labels incl. </s>
  std::vector<size_t> indices;       // corpus index of each sentence

  int64_t num_labels() const {  // sum of tgt_lengths: the loss normaliser N
    return std::accumulate(tgt_lengths.begin(), tgt_lengths.end(), int64_t{0});
  }
};

// Pads ids (without specials) into a Batch: source + </s>; <s> + target / target + </s>.
// `tgt_ids` may be empty (translation): then every tgt_* field stays empty and tgt_len is 0.
// `indices` is set to 0..B-1 (positions in the given lists); a caller taking the sentences from
// a corpus overwrites it with corpus indices.
Batch make_batch(const std::vector<std::vector<int32_t>>& src_ids, const std::vector<std::vector<int32_t>>& tgt_ids);

}  // namespace heed
