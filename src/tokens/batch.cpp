#include "tokens/batch.hpp"

#include <algorithm>
#include <string>

#include "util/error.hpp"

namespace heed {

Batch make_batch(const std::vector<std::vector<int32_t>>& src_ids, const std::vector<std::vector<int32_t>>& tgt_ids) {
  Batch b;
  b.size = int(src_ids.size());
  const bool has_target = !tgt_ids.empty();
  if (has_target && tgt_ids.size() != src_ids.size())
    throw Error("make_batch: " + std::to_string(src_ids.size()) + " sources but " + std::to_string(tgt_ids.size()) +
                " targets");
  for (const auto& s : src_ids) b.src_len = std::max(b.src_len, int(s.size()) + 1);
  if (has_target)
    for (const auto& t : tgt_ids) b.tgt_len = std::max(b.tgt_len, int(t.size()) + 1);

  b.src.assign(size_t(b.size) * b.src_len, kPadId);
  b.indices.resize(b.size);
  std::iota(b.indices.begin(), b.indices.end(), size_t{0});
  for (int i = 0; i < b.size; ++i) {
    const auto& s = src_ids[i];
    std::copy(s.begin(), s.end(), b.src.begin() + size_t(i) * b.src_len);
    b.src[size_t(i) * b.src_len + s.size()] = kEosId;
    b.src_lengths.push_back(int32_t(s.size()) + 1);
  }
  if (!has_target) return b;

  b.tgt_in.assign(size_t(b.size) * b.tgt_len, kPadId);
  b.tgt_out.assign(size_t(b.size) * b.tgt_len, kPadId);
  for (int i = 0; i < b.size; ++i) {
    const auto& t = tgt_ids[i];
    const size_t row = size_t(i) * b.tgt_len;
    b.tgt_in[row] = kBosId;
    std::copy(t.begin(), t.end(), b.tgt_in.begin() + row + 1);
    std::copy(t.begin(), t.end(), b.tgt_out.begin() + row);
    b.tgt_out[row + t.size()] = kEosId;
    b.tgt_lengths.push_back(int32_t(t.size()) + 1);
  }
  return b;
}

}  // namespace heed
