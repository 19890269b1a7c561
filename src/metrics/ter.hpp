#pragma once
// TER exactly as sacreBLEU 2.x computes it with its default settings (case-insensitive,
// no normalization, punctuation kept, no Asian support): Tercom-style greedy shifts with a
// beam-limited edit distance and the same candidate limits and tie-breaking.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace heed::metrics {

struct TerStats {
  int64_t num_edits = 0;
  double ref_length = 0;  // average reference length, summed over segments
  TerStats& operator+=(const TerStats& other);
};

// Number of edits (shifts + word edits) turning `hyp` into `ref`, as sacreBLEU's
// translation_edit_rate (words are already tokenized).
int64_t translation_edit_rate(const std::vector<uint32_t>& hyp, const std::vector<uint32_t>& ref);

TerStats ter_segment_stats(std::string_view hypothesis, const std::vector<std::string_view>& references);
double ter_from_stats(const TerStats& stats);  // 0..100 and beyond
double corpus_ter(const std::vector<std::string>& hypotheses, const std::vector<std::vector<std::string>>& references);

// "nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:<version>"
std::string ter_signature(size_t num_refs, std::string_view version);

}  // namespace heed::metrics
