#include "metrics/chrf.hpp"

#include "metrics/ngram_counts.hpp"
#include "metrics/unicode.hpp"
#include "metrics/word_ids.hpp"
#include "util/error.hpp"

namespace heed::metrics {

namespace {

constexpr int kMaxCharOrder = 6;  // 6 code points of 21 bits fill one 128-bit key
constexpr int kMaxWordOrder = 4;

// Python's string.punctuation, which chrF++ splits off word ends.
bool is_ascii_punctuation(char32_t c) {
  return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~');
}

// sacreBLEU's CHRF._remove_punctuation: one leading or trailing ASCII punctuation mark of a
// word longer than one character becomes its own word (the end is checked first).
std::vector<std::string_view> chrf_words(std::string_view line) {
  std::vector<std::string_view> words;
  for_each_token(line, [&](std::string_view w) {
    std::u32string cps = to_code_points(w);
    if (cps.size() == 1) {
      words.push_back(w);
    } else if (is_ascii_punctuation(cps.back())) {
      words.push_back(w.substr(0, w.size() - 1));
      words.push_back(w.substr(w.size() - 1));
    } else if (is_ascii_punctuation(cps.front())) {
      words.push_back(w.substr(0, 1));
      words.push_back(w.substr(1));
    } else {
      words.push_back(w);
    }
  });
  return words;
}

}  // namespace

ChrfStats& ChrfStats::operator+=(const ChrfStats& other) {
  if (values.empty()) values.assign(other.values.size(), 0);
  for (size_t i = 0; i < other.values.size(); ++i) values[i] += other.values[i];
  return *this;
}

void validate(const ChrfOptions& options) {
  if (options.char_order < 1 || options.char_order > kMaxCharOrder)
    throw UsageError("--chrf-char-order must be between 1 and 6, got " + std::to_string(options.char_order));
  if (options.word_order < 0 || options.word_order > kMaxWordOrder)
    throw UsageError("--chrf-word-order must be between 0 and 4, got " + std::to_string(options.word_order));
  if (options.beta < 1) throw UsageError("--chrf-beta must be at least 1, got " + std::to_string(options.beta));
}

struct ChrfSegmentScorer::Ngrams {
  std::vector<std::vector<NgramCount>> orders;  // char orders, then word orders
};

struct ChrfSegmentScorer::Scratch {
  WordIds word_ids;
  std::vector<uint32_t> ids;
  std::vector<NgramKey> keys;
  Ngrams hyp, ref;
};

ChrfSegmentScorer::ChrfSegmentScorer(ChrfOptions options) : options_(options), scratch_(std::make_shared<Scratch>()) {
  validate(options_);
}

void ChrfSegmentScorer::extract(std::string_view line, Ngrams& out) {
  Scratch& s = *scratch_;
  out.orders.resize(options_.char_order + options_.word_order);
  s.ids.clear();
  for_each_token(line, [&](std::string_view token) {  // ''.join(line.split())
    for (size_t i = 0; i < token.size();) s.ids.push_back(next_code_point(token, i));
  });
  for (int n = 1; n <= options_.char_order; ++n) count_ngrams(s.ids, n, 21, s.keys, out.orders[n - 1]);
  if (options_.word_order == 0) return;
  s.word_ids.assign(chrf_words(line), s.ids);
  for (int n = 1; n <= options_.word_order; ++n)
    count_ngrams(s.ids, n, 32, s.keys, out.orders[options_.char_order + n - 1]);
}

ChrfStats ChrfSegmentScorer::stats(std::string_view hypothesis, const std::vector<std::string_view>& references) {
  Scratch& s = *scratch_;
  s.word_ids.clear();
  extract(hypothesis, s.hyp);
  ChrfStats best;
  double best_f = -1.0;
  for (auto reference : references) {
    extract(reference, s.ref);
    ChrfStats candidate;
    for (size_t k = 0; k < s.hyp.orders.size(); ++k) {
      int64_t hyp_count = total_count(s.hyp.orders[k]);
      int64_t ref_count = total_count(s.ref.orders[k]);
      candidate.values.push_back(ref_count > 0 ? hyp_count : 0);  // no hits without reference n-grams
      candidate.values.push_back(ref_count);
      candidate.values.push_back(clipped_matches(s.hyp.orders[k], s.ref.orders[k]));
    }
    double f = chrf_from_stats(candidate, options_);
    if (f > best_f) {
      best_f = f;
      best = std::move(candidate);
    }
  }
  if (best.values.empty()) best.values.assign(3 * s.hyp.orders.size(), 0);
  return best;
}

double chrf_from_stats(const ChrfStats& stats, const ChrfOptions& options) {
  const double factor = static_cast<double>(options.beta) * options.beta;
  double avg_prec = 0.0, avg_rec = 0.0;
  int effective_order = 0;
  for (size_t i = 0; i + 2 < stats.values.size(); i += 3) {
    int64_t n_hyp = stats.values[i], n_ref = stats.values[i + 1], n_match = stats.values[i + 2];
    if (n_hyp > 0 && n_ref > 0) {
      avg_prec += static_cast<double>(n_match) / static_cast<double>(n_hyp);
      avg_rec += static_cast<double>(n_match) / static_cast<double>(n_ref);
      ++effective_order;
    }
  }
  if (effective_order == 0) return 0.0;
  avg_prec /= effective_order;
  avg_rec /= effective_order;
  if (avg_prec + avg_rec == 0.0) return 0.0;
  double score = (1 + factor) * avg_prec * avg_rec;
  score /= factor * avg_prec + avg_rec;
  return 100 * score;
}

double corpus_chrf(const std::vector<std::string>& hypotheses, const std::vector<std::vector<std::string>>& references,
                   const ChrfOptions& options) {
  for (size_t r = 0; r < references.size(); ++r)
    if (references[r].size() != hypotheses.size())
      throw Error("chrF: reference stream " + std::to_string(r + 1) + " has " + std::to_string(references[r].size()) +
                  " segments but there are " + std::to_string(hypotheses.size()) + " hypotheses");
  ChrfSegmentScorer scorer(options);
  ChrfStats total;
  std::vector<std::string_view> refs(references.size());
  for (size_t i = 0; i < hypotheses.size(); ++i) {
    for (size_t r = 0; r < references.size(); ++r) refs[r] = references[r][i];
    total += scorer.stats(hypotheses[i], refs);
  }
  return chrf_from_stats(total, options);
}

std::string chrf_name(const ChrfOptions& options) {
  return "chrF" + std::to_string(options.beta) + std::string(options.word_order, '+');
}

std::string chrf_signature(const ChrfOptions& options, size_t num_refs, std::string_view version) {
  return "nrefs:" + std::to_string(num_refs) + "|case:mixed|eff:yes|nc:" + std::to_string(options.char_order) +
         "|nw:" + std::to_string(options.word_order) + "|space:no|version:" + std::string(version);
}

}  // namespace heed::metrics
