#include "metrics/bleu.hpp"

#include <cmath>
#include <cstdio>

#include "metrics/ngram_counts.hpp"
#include "metrics/unicode.hpp"
#include "metrics/word_ids.hpp"
#include "util/error.hpp"

namespace heed::metrics {

namespace {

double default_smooth_value(BleuSmoothing smoothing) { return smoothing == BleuSmoothing::floor ? 0.1 : 1.0; }

// sacreBLEU's my_log: log(0) is a huge negative number rather than -inf.
double bleu_log(double x) { return x == 0.0 ? -9999999999.0 : std::log(x); }

}  // namespace

BleuSmoothing parse_bleu_smoothing(std::string_view name) {
  if (name == "exp") return BleuSmoothing::exp;
  if (name == "floor") return BleuSmoothing::floor;
  if (name == "add-k") return BleuSmoothing::add_k;
  if (name == "none") return BleuSmoothing::none;
  throw UsageError("unknown smoothing method '" + std::string(name) + "' (expected exp, floor, add-k or none)");
}

std::string_view smoothing_name(BleuSmoothing smoothing) {
  switch (smoothing) {
    case BleuSmoothing::exp: return "exp";
    case BleuSmoothing::floor: return "floor";
    case BleuSmoothing::add_k: return "add-k";
    case BleuSmoothing::none: return "none";
  }
  return "?";
}

BleuStats& BleuStats::operator+=(const BleuStats& other) {
  sys_len += other.sys_len;
  ref_len += other.ref_len;
  for (int n = 0; n < kBleuMaxOrder; ++n) {
    counts[n] += other.counts[n];
    totals[n] += other.totals[n];
  }
  return *this;
}

std::string BleuScore::verbose() const {
  std::string out;
  char buf[128];
  for (int n = 0; n < kBleuMaxOrder; ++n) {
    std::snprintf(buf, sizeof buf, n ? "/%.1f" : "%.1f", precisions[n]);
    out += buf;
  }
  std::snprintf(buf, sizeof buf, " (BP = %.3f ratio = %.3f hyp_len = %lld ref_len = %lld)", bp, ratio,
                static_cast<long long>(sys_len), static_cast<long long>(ref_len));
  return out + buf;
}

struct BleuSegmentScorer::Scratch {
  WordIds word_ids;
  std::vector<uint32_t> ids;
  std::vector<NgramKey> keys;
  std::array<std::vector<NgramCount>, kBleuMaxOrder> hyp_counts, ref_max;
  std::vector<NgramCount> ref_counts, merged;
};

BleuSegmentScorer::BleuSegmentScorer(BleuOptions options) : options_(options), scratch_(std::make_shared<Scratch>()) {}

std::string BleuSegmentScorer::preprocess(std::string_view line) const {
  if (options_.lowercase) return tokenize(options_.tokenizer, python_rstrip(python_lower(line)));
  return tokenize(options_.tokenizer, python_rstrip(line));
}

BleuStats BleuSegmentScorer::stats(std::string_view hypothesis, const std::vector<std::string_view>& references) {
  Scratch& s = *scratch_;
  s.word_ids.clear();
  BleuStats stats;

  std::string hyp_text = preprocess(hypothesis);
  std::vector<std::string> ref_texts;
  ref_texts.reserve(references.size());
  for (auto r : references) ref_texts.push_back(preprocess(r));

  std::vector<std::string_view> hyp_words = split_whitespace(hyp_text);
  s.word_ids.assign(hyp_words, s.ids);
  stats.sys_len = static_cast<int64_t>(hyp_words.size());
  for (int n = 0; n < kBleuMaxOrder; ++n) {
    count_ngrams(s.ids, n + 1, 32, s.keys, s.hyp_counts[n]);
    s.ref_max[n].clear();
  }

  // Closest reference length, ties going to the shorter one.
  int64_t closest_diff = -1, closest_len = -1;
  for (const auto& ref_text : ref_texts) {
    std::vector<std::string_view> ref_words = split_whitespace(ref_text);
    auto len = static_cast<int64_t>(ref_words.size());
    int64_t diff = std::llabs(stats.sys_len - len);
    if (closest_diff == -1 || diff < closest_diff) {
      closest_diff = diff;
      closest_len = len;
    } else if (diff == closest_diff && len < closest_len) {
      closest_len = len;
    }
    s.word_ids.assign(ref_words, s.ids);
    for (int n = 0; n < kBleuMaxOrder; ++n) {
      count_ngrams(s.ids, n + 1, 32, s.keys, s.ref_counts);
      merge_max(s.ref_max[n], s.ref_counts, s.merged);
    }
  }
  stats.ref_len = closest_len < 0 ? 0 : closest_len;

  for (int n = 0; n < kBleuMaxOrder; ++n) {
    stats.totals[n] = std::max<int64_t>(0, stats.sys_len - n);
    stats.counts[n] = clipped_matches(s.hyp_counts[n], s.ref_max[n]);
  }
  return stats;
}

BleuScore bleu_from_stats(const BleuStats& stats, const BleuOptions& options) {
  BleuScore result;
  result.counts = stats.counts;
  result.totals = stats.totals;
  result.sys_len = stats.sys_len;
  result.ref_len = stats.ref_len;
  result.ratio = stats.ref_len ? static_cast<double>(stats.sys_len) / static_cast<double>(stats.ref_len) : 0.0;
  if (stats.sys_len < stats.ref_len)
    result.bp = stats.sys_len > 0
                    ? std::exp(1.0 - static_cast<double>(stats.ref_len) / static_cast<double>(stats.sys_len))
                    : 0.0;
  else
    result.bp = 1.0;

  bool any_match = false;
  for (auto c : stats.counts) any_match = any_match || c != 0;
  if (!any_match) return result;  // sacreBLEU's early exit: score 0, precisions 0

  const double smooth_value = options.smooth_value.value_or(default_smooth_value(options.smoothing));
  double smooth_mteval = 1.0;
  int eff_order = kBleuMaxOrder;
  for (int n = 1; n <= kBleuMaxOrder; ++n) {
    // add-k adds to orders above 1 (as floating point numbers, like sacreBLEU).
    double correct = static_cast<double>(stats.counts[n - 1]);
    double total = static_cast<double>(stats.totals[n - 1]);
    if (options.smoothing == BleuSmoothing::add_k && n > 1) {
      correct += smooth_value;
      total += smooth_value;
    }
    if (total == 0) break;
    if (options.effective_order) eff_order = n;
    double& precision = result.precisions[n - 1];
    if (correct == 0) {
      if (options.smoothing == BleuSmoothing::exp) {
        smooth_mteval *= 2;
        precision = 100.0 / (smooth_mteval * total);
      } else if (options.smoothing == BleuSmoothing::floor) {
        precision = 100.0 * smooth_value / total;
      }
    } else {
      precision = 100.0 * correct / total;
    }
  }
  double log_sum = 0.0;
  for (int n = 0; n < eff_order; ++n) log_sum += bleu_log(result.precisions[n]);
  result.score = result.bp * std::exp(log_sum / eff_order);
  return result;
}

BleuScore corpus_bleu(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& references, const BleuOptions& options) {
  for (size_t r = 0; r < references.size(); ++r)
    if (references[r].size() != hypotheses.size())
      throw Error("BLEU: reference stream " + std::to_string(r + 1) + " has " + std::to_string(references[r].size()) +
                  " segments but there are " + std::to_string(hypotheses.size()) + " hypotheses");
  BleuSegmentScorer scorer(options);
  BleuStats total;
  std::vector<std::string_view> refs(references.size());
  for (size_t i = 0; i < hypotheses.size(); ++i) {
    for (size_t r = 0; r < references.size(); ++r) refs[r] = references[r][i];
    total += scorer.stats(hypotheses[i], refs);
  }
  return bleu_from_stats(total, options);
}

BleuScore sentence_bleu(std::string_view hypothesis, const std::vector<std::string_view>& references,
                        const BleuOptions& options) {
  BleuSegmentScorer scorer(options);
  return bleu_from_stats(scorer.stats(hypothesis, references), options);
}

std::string bleu_signature(const BleuOptions& options, size_t num_refs, std::string_view version) {
  std::string smooth(smoothing_name(options.smoothing));
  if (options.smoothing == BleuSmoothing::floor || options.smoothing == BleuSmoothing::add_k) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "[%.2f]", options.smooth_value.value_or(default_smooth_value(options.smoothing)));
    smooth += buf;
  }
  return "nrefs:" + std::to_string(num_refs) + "|case:" + (options.lowercase ? "lc" : "mixed") +
         "|eff:" + (options.effective_order ? "yes" : "no") + "|tok:" + std::string(tokenizer_name(options.tokenizer)) +
         "|smooth:" + smooth + "|version:" + std::string(version);
}

}  // namespace heed::metrics
