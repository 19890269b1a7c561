#pragma once
// Corpus BLEU exactly as sacreBLEU 2.x computes it (same statistics, smoothing, rounding inputs),
// for the `heed bleu` command and for validation during training.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/sacrebleu_tokenizers.hpp"

namespace heed::metrics {

enum class BleuSmoothing { exp, floor, add_k, none };

// "exp", "floor", "add-k", "none"; throws heed::UsageError otherwise.
BleuSmoothing parse_bleu_smoothing(std::string_view name);
std::string_view smoothing_name(BleuSmoothing smoothing);

struct BleuOptions {
  BleuTokenizer tokenizer = BleuTokenizer::k13a;
  bool lowercase = false;
  BleuSmoothing smoothing = BleuSmoothing::exp;
  std::optional<double> smooth_value;  // floor: 0.1, add-k: 1 when unset; ignored by exp/none
  bool effective_order = false;
};

constexpr int kBleuMaxOrder = 4;

// Sufficient statistics: they add up over segments.
struct BleuStats {
  int64_t sys_len = 0, ref_len = 0;
  std::array<int64_t, kBleuMaxOrder> counts{}, totals{};  // clipped matches / hypothesis n-grams

  BleuStats& operator+=(const BleuStats& other);
};

struct BleuScore {
  double score = 0;  // 0..100
  std::array<int64_t, kBleuMaxOrder> counts{}, totals{};
  std::array<double, kBleuMaxOrder> precisions{};  // percent, after smoothing
  double bp = 0, ratio = 0;
  int64_t sys_len = 0, ref_len = 0;

  // "77.9/66.2/58.1/51.5 (BP = 1.000 ratio = 1.004 hyp_len = 4864 ref_len = 4920)"
  std::string verbose() const;
};

// Statistics of one segment against its references (one string per reference).
class BleuSegmentScorer {
 public:
  explicit BleuSegmentScorer(BleuOptions options);
  BleuStats stats(std::string_view hypothesis, const std::vector<std::string_view>& references);
  const BleuOptions& options() const { return options_; }

 private:
  std::string preprocess(std::string_view line) const;
  BleuOptions options_;
  struct Scratch;
  std::shared_ptr<Scratch> scratch_;
};

BleuScore bleu_from_stats(const BleuStats& stats, const BleuOptions& options);

// hypotheses[i] is scored against references[r][i] for every reference stream r; all streams
// must have the hypotheses' length (throws heed::Error otherwise). No segments gives BLEU 0.
BleuScore corpus_bleu(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& references, const BleuOptions& options = {});
BleuScore sentence_bleu(std::string_view hypothesis, const std::vector<std::string_view>& references,
                        const BleuOptions& options = {});

// "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:<version>"
std::string bleu_signature(const BleuOptions& options, size_t num_refs, std::string_view version);

}  // namespace heed::metrics
