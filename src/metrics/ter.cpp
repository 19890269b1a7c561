#include "metrics/ter.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "metrics/unicode.hpp"
#include "metrics/word_ids.hpp"
#include "util/error.hpp"

namespace heed::metrics {

namespace {

// Tercom's limits, as in sacreBLEU's lib_ter.py.
constexpr int kMaxShiftSize = 10;
constexpr int kMaxShiftDist = 50;
constexpr int kBeamWidth = 25;
constexpr int kMaxShiftCandidates = 1000;
constexpr int64_t kInfinity = static_cast<int64_t>(1e16);

enum Op : char { kNop = ' ', kSub = 's', kIns = 'i', kDel = 'd', kUndef = 'x' };

struct Cell {
  int64_t cost;
  char op;
};

// sacreBLEU's BeamEditDistance for one reference. Instead of its trie cache, the rows of the
// last computed hypothesis are kept and reused for the common prefix of the next one: a row
// depends only on the hypothesis prefix (all hypotheses of one segment have the same length),
// so the results are identical. A row keeps only its beam (the cells around the diagonal that
// sacreBLEU computes; all others are infinite): memory grows with the length times the beam,
// not with the product of the lengths (a 30,000-word line pair would take 14 GB).
class BeamEditDistance {
 public:
  explicit BeamEditDistance(const std::vector<uint32_t>& ref) : ref_(ref) {}

  // Edit distance of `hyp` to the reference; `trace` (when given) gets the operations.
  int64_t operator()(const std::vector<uint32_t>& hyp, std::string* trace) {
    const size_t n_hyp = hyp.size(), n_ref = ref_.size();
    if (rows_.empty() || rows_.size() != n_hyp + 1) {
      rows_.assign(n_hyp + 1, Row{});
      rows_[0].cells.resize(n_ref + 1);
      for (size_t j = 0; j <= n_ref; ++j) rows_[0].cells[j] = {static_cast<int64_t>(j), kIns};
      words_.clear();
    }
    size_t start = 0;  // rows 0..start are valid for this hypothesis
    while (start < words_.size() && start < n_hyp && words_[start] == hyp[start]) ++start;
    if (start == n_hyp && words_.size() == n_hyp) {
      // same hypothesis as last time: everything is valid
    } else {
      compute(hyp, start);
      words_ = hyp;
    }
    if (trace) *trace = make_trace(n_hyp, n_ref);
    return rows_[n_hyp].at(static_cast<int64_t>(n_ref)).cost;
  }

 private:
  // The cells first .. first + cells.size() - 1 of a row; every other cell is infinite.
  struct Row {
    int64_t first = 0;
    std::vector<Cell> cells;
    Cell at(int64_t j) const {
      return j >= first && j < first + static_cast<int64_t>(cells.size()) ? cells[j - first] : Cell{kInfinity, kUndef};
    }
  };

  void compute(const std::vector<uint32_t>& hyp, size_t start) {
    const size_t n_hyp = hyp.size(), n_ref = ref_.size();
    const double length_ratio = n_hyp ? static_cast<double>(n_ref) / static_cast<double>(n_hyp) : 1.0;
    int64_t beam_width = kBeamWidth;
    if (kBeamWidth < length_ratio / 2) beam_width = static_cast<int64_t>(std::ceil(length_ratio / 2 + kBeamWidth));
    for (size_t i = start + 1; i <= n_hyp; ++i) {
      Row& row = rows_[i];
      const Row& prev = rows_[i - 1];
      auto pseudo_diag = static_cast<int64_t>(std::floor(static_cast<double>(i) * length_ratio));
      int64_t min_j = std::max<int64_t>(0, pseudo_diag - beam_width);
      int64_t max_j = std::min<int64_t>(static_cast<int64_t>(n_ref) + 1, pseudo_diag + beam_width);
      if (i == n_hyp) max_j = static_cast<int64_t>(n_ref) + 1;
      row.first = min_j;
      row.cells.resize(static_cast<size_t>(std::max<int64_t>(max_j - min_j, 0)));
      auto prev_cost = [&prev](int64_t j) {
        const auto k = static_cast<uint64_t>(j - prev.first);
        return k < prev.cells.size() ? prev.cells[k].cost : kInfinity;
      };
      const uint32_t word = hyp[i - 1];
      int64_t left = kInfinity;  // the cell before j in this row: outside the beam at first
      for (int64_t j = min_j; j < max_j; ++j) {
        // Order of preference as in sacreBLEU: sub/nop, deletion, insertion; strict improvement
        // (written without branches on the costs: they are data, and mispredicted they cost
        // more than the arithmetic).
        int64_t best = kInfinity;
        Op op = kUndef;
        if (j == 0) {
          best = prev_cost(0) + 1;
          op = kDel;
        } else {
          const bool same = word == ref_[j - 1];
          const int64_t sub = prev_cost(j - 1) + (same ? 0 : 1), del = prev_cost(j) + 1, ins = left + 1;
          op = sub < best ? (same ? kNop : kSub) : op;
          best = std::min(best, sub);
          op = del < best ? kDel : op;
          best = std::min(best, del);
          op = ins < best ? kIns : op;
          best = std::min(best, ins);
        }
        row.cells[j - min_j] = {best, op};
        left = best;
      }
    }
  }

  std::string make_trace(size_t i, size_t j) const {
    std::string reversed;
    while (i > 0 || j > 0) {
      char op = rows_[i].at(static_cast<int64_t>(j)).op;
      reversed.push_back(op);
      if (op == kSub || op == kNop) {
        --i, --j;
      } else if (op == kIns) {
        --j;
      } else if (op == kDel) {
        --i;
      } else {
        throw Error("TER: edit distance trace left the beam");  // cannot happen: last row is full
      }
    }
    return {reversed.rbegin(), reversed.rend()};
  }

  const std::vector<uint32_t>& ref_;
  std::vector<Row> rows_;
  std::vector<uint32_t> words_;  // hypothesis the rows belong to
};

// trace_to_alignment on the flipped trace (rewriting the reference into the hypothesis).
struct Alignment {
  std::vector<int64_t> ref_to_hyp;  // every reference position is aligned (-1 possible)
  std::vector<int> ref_err, hyp_err;
};

Alignment align_from_trace(const std::string& trace, size_t n_ref) {
  Alignment a;
  a.ref_to_hyp.assign(n_ref, 0);
  int64_t pos_hyp = -1, pos_ref = -1;
  for (char op : trace) {
    // Flipped: the distance's deletions (consuming hypothesis words) become insertions.
    if (op == kNop || op == kSub) {
      ++pos_hyp, ++pos_ref;
      a.ref_to_hyp[pos_ref] = pos_hyp;
      a.hyp_err.push_back(op == kSub);
      a.ref_err.push_back(op == kSub);
    } else if (op == kDel) {  // flipped to insertion
      ++pos_hyp;
      a.hyp_err.push_back(1);
    } else {  // kIns flipped to deletion
      ++pos_ref;
      a.ref_to_hyp[pos_ref] = pos_hyp;
      a.ref_err.push_back(1);
    }
  }
  return a;
}

// Python slicing words[from:to] with clamping.
void append_slice(std::vector<uint32_t>& out, const std::vector<uint32_t>& words, int64_t from, int64_t to) {
  auto n = static_cast<int64_t>(words.size());
  from = std::clamp<int64_t>(from, 0, n);
  to = std::clamp<int64_t>(to, 0, n);
  if (from < to) out.insert(out.end(), words.begin() + from, words.begin() + to);
}

std::vector<uint32_t> perform_shift(const std::vector<uint32_t>& words, int64_t start, int64_t length, int64_t target) {
  std::vector<uint32_t> out;
  out.reserve(words.size());
  auto n = static_cast<int64_t>(words.size());
  if (target < start) {
    append_slice(out, words, 0, target);
    append_slice(out, words, start, start + length);
    append_slice(out, words, target, start);
    append_slice(out, words, start + length, n);
  } else if (target > start + length) {
    append_slice(out, words, 0, start);
    append_slice(out, words, start + length, target);
    append_slice(out, words, start, start + length);
    append_slice(out, words, target, n);
  } else {
    append_slice(out, words, 0, start);
    append_slice(out, words, start + length, length + target);
    append_slice(out, words, start, start + length);
    append_slice(out, words, length + target, n);
  }
  return out;
}

struct ShiftResult {
  int64_t delta = 0;
  std::vector<uint32_t> words;
};

// sacreBLEU's _shift: the best single shift (by score gain, then length, then earliest source,
// then earliest target), counting evaluated candidates across calls.
ShiftResult best_shift(const std::vector<uint32_t>& hyp, const std::vector<uint32_t>& ref, BeamEditDistance& ed,
                       int& checked_candidates) {
  std::string trace;
  int64_t pre_score = ed(hyp, &trace);
  Alignment a = align_from_trace(trace, ref.size());

  bool have_best = false;
  std::tuple<int64_t, int64_t, int64_t, int64_t> best_key;
  std::vector<uint32_t> best_words;

  auto n_hyp = static_cast<int64_t>(hyp.size()), n_ref = static_cast<int64_t>(ref.size());
  auto sum = [](const std::vector<int>& v, int64_t from, int64_t length) {
    int total = 0;
    for (int64_t k = from; k < from + length && k < static_cast<int64_t>(v.size()); ++k) total += v[k];
    return total;
  };
  for (int64_t start_h = 0; start_h < n_hyp; ++start_h) {
    // Only starts within kMaxShiftDist of start_h count: the loop visits just those (a long
    // line would otherwise spend its time skipping the others).
    const int64_t last_r = std::min(n_ref, start_h + kMaxShiftDist + 1);
    for (int64_t start_r = std::max<int64_t>(0, start_h - kMaxShiftDist); start_r < last_r; ++start_r) {
      int64_t length = 0;
      // _find_shifted_pairs yields every prefix of a matching run (up to kMaxShiftSize words).
      while (hyp[start_h + length] == ref[start_r + length] && length < kMaxShiftSize) {
        ++length;
        bool consumed = n_hyp == start_h + length || n_ref == start_r + length;

        bool skip = sum(a.hyp_err, start_h, length) == 0 || sum(a.ref_err, start_r, length) == 0 ||
                    (start_h <= a.ref_to_hyp[start_r] && a.ref_to_hyp[start_r] < start_h + length);
        if (!skip) {
          int64_t prev_idx = -1;
          for (int64_t offset = -1; offset < length; ++offset) {
            int64_t idx;
            if (start_r + offset == -1)
              idx = 0;
            else if (start_r + offset < n_ref)
              idx = a.ref_to_hyp[start_r + offset] + 1;
            else
              break;
            if (idx == prev_idx) continue;
            prev_idx = idx;
            std::vector<uint32_t> shifted = perform_shift(hyp, start_h, length, idx);
            auto key = std::make_tuple(pre_score - ed(shifted, nullptr), length, -start_h, -idx);
            ++checked_candidates;
            if (!have_best || key > best_key) {
              have_best = true;
              best_key = key;
              best_words = std::move(shifted);
            }
          }
          if (checked_candidates >= kMaxShiftCandidates) {
            return have_best ? ShiftResult{std::get<0>(best_key), std::move(best_words)} : ShiftResult{0, hyp};
          }
        }
        if (consumed) break;
      }
    }
  }
  if (!have_best) return {0, hyp};
  return {std::get<0>(best_key), std::move(best_words)};
}

}  // namespace

TerStats& TerStats::operator+=(const TerStats& other) {
  num_edits += other.num_edits;
  ref_length += other.ref_length;
  return *this;
}

int64_t translation_edit_rate(const std::vector<uint32_t>& hyp, const std::vector<uint32_t>& ref) {
  if (ref.empty()) return static_cast<int64_t>(hyp.size());
  BeamEditDistance ed(ref);
  int64_t shifts = 0;
  std::vector<uint32_t> input = hyp;
  int checked_candidates = 0;
  for (;;) {
    ShiftResult r = best_shift(input, ref, ed, checked_candidates);
    if (checked_candidates >= kMaxShiftCandidates) break;
    if (r.delta <= 0) break;
    ++shifts;
    input = std::move(r.words);
  }
  return shifts + ed(input, nullptr);
}

TerStats ter_segment_stats(std::string_view hypothesis, const std::vector<std::string_view>& references) {
  // sacreBLEU's default TercomTokenizer: lowercase, then whitespace split.
  WordIds word_ids;
  std::string hyp_text = python_lower(python_rstrip(hypothesis));
  std::vector<uint32_t> hyp_ids, ref_ids;
  word_ids.assign(split_whitespace(hyp_text), hyp_ids);
  int64_t best = kInfinity;
  double ref_lengths = 0;
  // word_ids keeps views of every word it has seen: each reference's text lives to the end.
  std::vector<std::string> ref_texts;
  ref_texts.reserve(references.size());
  for (auto reference : references) {
    const std::string& ref_text = ref_texts.emplace_back(python_lower(python_rstrip(reference)));
    word_ids.assign(split_whitespace(ref_text), ref_ids);
    int64_t edits = translation_edit_rate(hyp_ids, ref_ids);
    ref_lengths += static_cast<double>(ref_ids.size());
    best = std::min(best, edits);
  }
  TerStats stats;
  stats.num_edits = references.empty() ? 0 : best;
  stats.ref_length = references.empty() ? 0 : ref_lengths / static_cast<double>(references.size());
  return stats;
}

double ter_from_stats(const TerStats& stats) {
  double score;
  if (stats.ref_length > 0)
    score = static_cast<double>(stats.num_edits) / stats.ref_length;
  else if (stats.num_edits > 0)
    score = 1.0;  // empty references, non-empty hypothesis
  else
    score = 0.0;
  return 100 * score;
}

double corpus_ter(const std::vector<std::string>& hypotheses, const std::vector<std::vector<std::string>>& references) {
  for (size_t r = 0; r < references.size(); ++r)
    if (references[r].size() != hypotheses.size())
      throw Error("TER: reference stream " + std::to_string(r + 1) + " has " + std::to_string(references[r].size()) +
                  " segments but there are " + std::to_string(hypotheses.size()) + " hypotheses");
  TerStats total;
  std::vector<std::string_view> refs(references.size());
  for (size_t i = 0; i < hypotheses.size(); ++i) {
    for (size_t r = 0; r < references.size(); ++r) refs[r] = references[r][i];
    total += ter_segment_stats(hypotheses[i], refs);
  }
  return ter_from_stats(total);
}

std::string ter_signature(size_t num_refs, std::string_view version) {
  return "nrefs:" + std::to_string(num_refs) +
         "|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:" + std::string(version);
}

}  // namespace heed::metrics
