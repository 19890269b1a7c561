#pragma once
// chrF / chrF++ exactly as sacreBLEU 2.x computes them (whitespace removed, per-order averaged
// precision and recall, best reference per segment).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace heed::metrics {

struct ChrfOptions {
  int char_order = 6;  // 1..6
  int word_order = 0;  // 0 (chrF) .. 4; 2 is chrF++
  int beta = 2;
};

// Per order (characters 1..char_order, then words 1..word_order): hyp n-grams, ref n-grams,
// matches. Adds up over segments.
struct ChrfStats {
  std::vector<int64_t> values;
  ChrfStats& operator+=(const ChrfStats& other);
};

// Throws heed::UsageError for orders or beta out of range.
void validate(const ChrfOptions& options);

class ChrfSegmentScorer {
 public:
  explicit ChrfSegmentScorer(ChrfOptions options);
  ChrfStats stats(std::string_view hypothesis, const std::vector<std::string_view>& references);

 private:
  struct Ngrams;
  void extract(std::string_view line, Ngrams& out);
  ChrfOptions options_;
  struct Scratch;
  std::shared_ptr<Scratch> scratch_;
};

// 0..100
double chrf_from_stats(const ChrfStats& stats, const ChrfOptions& options);
double corpus_chrf(const std::vector<std::string>& hypotheses, const std::vector<std::vector<std::string>>& references,
                   const ChrfOptions& options = {});

// "chrF2", "chrF2++"
std::string chrf_name(const ChrfOptions& options);
// "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:<version>"
std::string chrf_signature(const ChrfOptions& options, size_t num_refs, std::string_view version);

}  // namespace heed::metrics
