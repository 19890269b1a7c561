#pragma once
// Exact n-gram counting for the metrics: an n-gram of small integer ids (word ids local to one
// segment, or code points) is packed into one 128-bit key, counted by sorting.
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

namespace heed::metrics {

using NgramKey = unsigned __int128;

struct NgramCount {
  NgramKey key;
  int64_t count;
};

// Sorted distinct n-grams of `order` consecutive ids, each id below 2^bits_per_id.
inline void count_ngrams(std::span<const uint32_t> ids, size_t order, unsigned bits_per_id,
                         std::vector<NgramKey>& scratch, std::vector<NgramCount>& out) {
  out.clear();
  scratch.clear();
  if (ids.size() < order) return;
  for (size_t i = 0; i + order <= ids.size(); ++i) {
    NgramKey key = 0;
    for (size_t k = 0; k < order; ++k) key = (key << bits_per_id) | ids[i + k];
    scratch.push_back(key);
  }
  std::sort(scratch.begin(), scratch.end());
  for (size_t i = 0; i < scratch.size();) {
    size_t j = i;
    while (j < scratch.size() && scratch[j] == scratch[i]) ++j;
    out.push_back({scratch[i], static_cast<int64_t>(j - i)});
    i = j;
  }
}

// Sum over n-grams of min(hyp count, ref count): the clipped matches. Both lists sorted.
inline int64_t clipped_matches(const std::vector<NgramCount>& hyp, const std::vector<NgramCount>& ref) {
  int64_t matches = 0;
  size_t j = 0;
  for (const auto& h : hyp) {
    while (j < ref.size() && ref[j].key < h.key) ++j;
    if (j == ref.size()) break;
    if (ref[j].key == h.key) matches += std::min(h.count, ref[j].count);
  }
  return matches;
}

inline int64_t total_count(const std::vector<NgramCount>& counts) {
  int64_t total = 0;
  for (const auto& c : counts) total += c.count;
  return total;
}

// Per n-gram maximum of two sorted count lists (several references clip by their maximum).
inline void merge_max(std::vector<NgramCount>& into, const std::vector<NgramCount>& other,
                      std::vector<NgramCount>& scratch) {
  scratch.clear();
  size_t i = 0, j = 0;
  while (i < into.size() || j < other.size()) {
    if (j == other.size() || (i < into.size() && into[i].key < other[j].key)) {
      scratch.push_back(into[i++]);
    } else if (i == into.size() || other[j].key < into[i].key) {
      scratch.push_back(other[j++]);
    } else {
      scratch.push_back({into[i].key, std::max(into[i].count, other[j].count)});
      ++i, ++j;
    }
  }
  into.swap(scratch);
}

}  // namespace heed::metrics
