#pragma once
// One padded batch of sentence pairs, the unit models train on and translate. Plain data: the data
// pipeline fills it, the models read it. Ids follow the tokenizer's fixed specials (pad 0, <s> 2,
// </s> 3; see text/tokenizer.hpp), repeated here so that models need not depend on text.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "util/error.hpp"

namespace heed {

struct Batch {                       // one padded batch, row-major [B, S] / [B, T], pad id 0
  int size = 0;                      // B sentences
  int src_len = 0;                   // S = longest source incl. </s>
  int tgt_len = 0;                   // T = longest target incl. <s> (tgt_in) / </s> (tgt_out)
  std::vector<int32_t> src;          // [B*S] source ids + </s>, right-padded with 0
  std::vector<int32_t> src_lengths;  // [B] real source positions incl. </s>
  std::vector<int32_t> tgt_in;       // [B*T] <s> + target ids, padded
  std::vector<int32_t> tgt_out;      // [B*T] target ids + </s>, padded
  std::vector<int32_t> tgt_lengths;  // [B] labels incl. </s>
  std::vector<size_t> indices;       // corpus index of each sentence

  int64_t num_labels() const {       // sum of tgt_lengths: the loss normaliser N
    return std::accumulate(tgt_lengths.begin(), tgt_lengths.end(), int64_t{0});
  }
};

inline constexpr int32_t kBatchPad = 0, kBatchBos = 2, kBatchEos = 3;

// Pads ids (without specials) into a Batch: source + </s>; <s> + target / target + </s>.
// `tgt_ids` may be empty (translation): then every tgt_* field stays empty and tgt_len is 0.
// `indices` is set to 0..B-1 (positions in the given lists); a caller taking the sentences from
// a corpus overwrites it with corpus indices.
inline Batch make_batch(const std::vector<std::vector<int32_t>>& src_ids,
                        const std::vector<std::vector<int32_t>>& tgt_ids) {
  Batch b;
  b.size = int(src_ids.size());
  const bool has_target = !tgt_ids.empty();
  if (has_target && tgt_ids.size() != src_ids.size())
    throw Error("make_batch: " + std::to_string(src_ids.size()) + " sources but " +
                std::to_string(tgt_ids.size()) + " targets");
  for (const auto& s : src_ids) b.src_len = std::max(b.src_len, int(s.size()) + 1);
  if (has_target)
    for (const auto& t : tgt_ids) b.tgt_len = std::max(b.tgt_len, int(t.size()) + 1);

  b.src.assign(size_t(b.size) * b.src_len, kBatchPad);
  b.indices.resize(b.size);
  std::iota(b.indices.begin(), b.indices.end(), size_t{0});
  for (int i = 0; i < b.size; ++i) {
    const auto& s = src_ids[i];
    std::copy(s.begin(), s.end(), b.src.begin() + size_t(i) * b.src_len);
    b.src[size_t(i) * b.src_len + s.size()] = kBatchEos;
    b.src_lengths.push_back(int32_t(s.size()) + 1);
  }
  if (!has_target) return b;

  b.tgt_in.assign(size_t(b.size) * b.tgt_len, kBatchPad);
  b.tgt_out.assign(size_t(b.size) * b.tgt_len, kBatchPad);
  for (int i = 0; i < b.size; ++i) {
    const auto& t = tgt_ids[i];
    const size_t row = size_t(i) * b.tgt_len;
    b.tgt_in[row] = kBatchBos;
    std::copy(t.begin(), t.end(), b.tgt_in.begin() + row + 1);
    std::copy(t.begin(), t.end(), b.tgt_out.begin() + row);
    b.tgt_out[row + t.size()] = kBatchEos;
    b.tgt_lengths.push_back(int32_t(t.size()) + 1);
  }
  return b;
}

}  // namespace heed
