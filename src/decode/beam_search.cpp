#include "decode/beam_search.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "tensor/fast_math.hpp"
#include "util/error.hpp"
#include "util/parallel.hpp"

namespace heed {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// One generated token: row `row` of step `step` produced it after hypothesis `parent` (-1: none).
// Hypotheses are chains of nodes, so following a beam never copies token or attention histories.
struct Node {
  int parent;
  int32_t token;
  int step;
  int row;
};

struct Live {
  int node;  // last token's node, -1 before the first step
  int length;
  float log_prob;
};

struct Candidate {
  float log_prob;
  int row;
  int32_t token;
};

struct Finished {
  int node;  // the last token before </s>, -1 for the empty hypothesis
  int step, row, length;
  float log_prob, score;
};

// Total order: higher log-probability first, then earlier row (the better-ranked parent), then
// lower token id. It keeps every decision independent of the other sentences in the batch.
bool better(const Candidate& a, const Candidate& b) {
  if (a.log_prob != b.log_prob) return a.log_prob > b.log_prob;
  if (a.row != b.row) return a.row < b.row;
  return a.token < b.token;
}

// max + log Σ_v exp(logits[v] − max), for the row's maximum `top` (not -inf). Independent
// partial sums, so that the additions do not wait on each other.
float log_normaliser_given_max(const float* logits, int vocab, float top) {
  constexpr int kLanes = 32;
  float partial[kLanes] = {};
  int v = 0;
  for (; v + kLanes <= vocab; v += kLanes)
#pragma omp simd
    for (int i = 0; i < kLanes; ++i) partial[i] += fast_exp(logits[v + i] - top);
  float sum = 0;
  for (; v < vocab; ++v) sum += fast_exp(logits[v] - top);
  for (float p : partial) sum += p;
  return top + std::log(sum);
}

}  // namespace

float log_normaliser(const float* logits, int vocab) {
  const float top = max_of(logits, vocab);  // NaN never wins
  return top == kNegInf ? kNegInf : log_normaliser_given_max(logits, vocab, top);
}

namespace {

// Appends the k best allowed finite extensions of one row, as candidates with total
// log-probability live + logit − log Σ exp(logits). Ties keep the lower token id. Most of the
// vocabulary is below the k-th best so far, so it is scanned in chunks whose maximum (a vector
// reduction) is compared first; the chunk maxima also give the row's maximum for the normaliser.
void add_row_candidates(const float* logits, int vocab, const std::vector<char>& allowed, int k, const Live& live,
                        int row, std::vector<Candidate>& out) {
  constexpr int kChunk = 64;
  std::vector<std::pair<float, int32_t>> top;
  top.reserve(k);
  float threshold = kNegInf;  // a value must exceed it to enter: the k-th best once top is full
  float row_max = kNegInf;
  for (int v0 = 0; v0 < vocab; v0 += kChunk) {
    const int v1 = std::min(vocab, v0 + kChunk);
    float chunk_max = kNegInf;
#pragma omp simd reduction(max : chunk_max)
    for (int v = v0; v < v1; ++v) chunk_max = logits[v] > chunk_max ? logits[v] : chunk_max;  // NaN never wins
    row_max = std::max(row_max, chunk_max);
    if (!(chunk_max > threshold)) continue;
    for (int v = v0; v < v1; ++v) {
      const float logit = logits[v];
      if (!(logit > threshold) || !allowed[v]) continue;  // also skips NaN
      if (static_cast<int>(top.size()) == k) top.pop_back();
      auto pos = std::find_if(top.begin(), top.end(), [logit](const auto& e) { return logit > e.first; });
      top.insert(pos, {logit, v});
      if (static_cast<int>(top.size()) == k) threshold = top.back().first;
    }
  }
  if (top.empty()) return;
  const float normaliser = log_normaliser_given_max(logits, vocab, row_max);
  if (!std::isfinite(normaliser)) return;  // a NaN logit
  for (const auto& [logit, token] : top) out.push_back({live.log_prob + (logit - normaliser), row, token});
}

// Score of the nbest-th best finished hypothesis (the one a live hypothesis must beat).
float kth_best_score(const std::vector<Finished>& finished, int k) {
  std::vector<float> scores;
  for (const auto& f : finished) scores.push_back(f.score);
  std::nth_element(scores.begin(), scores.begin() + (k - 1), scores.end(), std::greater<float>());
  return scores[k - 1];
}

class Search {
 public:
  Search(Seq2Seq& model, const Batch& batch, const DecodingConfig& options, bool keep_attention,
         const SearchConstraints& constraints)
      : model_(model),
        batch_(batch),
        opt_(options),
        keep_attention_(keep_attention),
        constraints_(constraints),
        vocab_(model.target_vocab()),
        allowed_(allowed_tokens(vocab_, options)) {
    for (int b = 0; b < batch.size; ++b)
      max_length_.push_back(search_length_limit(model, batch.src_lengths[b] - 1,
                                                static_cast<int>(constraints.prefix(b).size()), options));
    finished_.resize(batch.size);
  }

  std::vector<std::vector<Hypothesis>> run() {
    const int K = opt_.beam;
    std::unique_ptr<DecoderState> state = model_.begin(batch_);
    std::vector<Live> live(batch_.size, Live{-1, 0, 0.f});
    std::vector<int> sentence(batch_.size);
    std::iota(sentence.begin(), sentence.end(), 0);
    std::vector<int32_t> previous(batch_.size, kBosId);
    std::vector<Candidate> candidates;

    for (int t = 0; !live.empty(); ++t) {
      StepOutput out = model_.step(*state, previous);
      const Tensor logits = step_logits(out, live.size(), vocab_, "beam search");
      attention_.push_back(out.attention.defined() && keep_attention_ ? out.attention.contiguous() : Tensor());

      // Each row's best extensions, rows in parallel: the log-softmax and the scan over the
      // vocabulary are the search's own cost, fused so that no [rows, V] log-probabilities are
      // written. Then each sentence merges its rows' lists in order.
      const int64_t rows = static_cast<int64_t>(live.size());
      row_candidates_.resize(rows);
      ParallelFailure failure;  // the candidate lists allocate
#pragma omp parallel for schedule(static) if (rows * vocab_ >= kParallelScan)
      for (int64_t r = 0; r < rows; ++r) {
        failure.capture([&] {
          std::vector<Candidate>& mine = row_candidates_[r];
          mine.clear();
          const float* row_logits = logits.data() + r * vocab_;
          const std::vector<int32_t>& prefix = constraints_.prefix(sentence[r]);
          const bool forced = t >= max_length_[sentence[r]] || t < static_cast<int>(prefix.size());
          if (forced) {  // the prefix's next token, or </s> at the length limit
            const int32_t token = t >= max_length_[sentence[r]] ? kEosId : prefix[t];
            const float normaliser = log_normaliser(row_logits, vocab_);
            if (row_logits[token] > kNegInf && std::isfinite(normaliser))
              mine.push_back({live[r].log_prob + (row_logits[token] - normaliser), static_cast<int>(r), token});
          } else {
            add_row_candidates(row_logits, vocab_, allowed_, 2 * K, live[r], static_cast<int>(r), mine);
          }
        });
      }
      failure.rethrow();

      std::vector<Live> next_live;
      std::vector<int> next_sentence, next_rows;
      std::vector<int32_t> next_previous;
      for (size_t first = 0; first < live.size();) {
        const int b = sentence[first];
        size_t end = first;
        while (end < live.size() && sentence[end] == b) ++end;
        const bool at_limit = t >= max_length_[b];
        candidates.clear();
        for (size_t r = first; r < end; ++r)
          candidates.insert(candidates.end(), row_candidates_[r].begin(), row_candidates_[r].end());
        const size_t keep = std::min(candidates.size(), size_t(2) * K);
        std::partial_sort(candidates.begin(), candidates.begin() + keep, candidates.end(), better);

        std::vector<Candidate> continuing;
        for (size_t j = 0; j < keep; ++j) {
          const Candidate& c = candidates[j];
          const Live& parent = live[c.row];
          if (c.token == kEosId) {
            if (j < size_t(K))
              finished_[b].push_back({parent.node, t, c.row, parent.length, c.log_prob,
                                      length_normalised(c.log_prob, parent.length + 1, opt_.length_penalty)});
          } else if (continuing.size() < size_t(K)) {
            continuing.push_back(c);
          }
        }
        if (!sentence_done(b, at_limit, continuing, t + 1)) {
          for (const Candidate& c : continuing) {
            nodes_.push_back({live[c.row].node, c.token, t, c.row});
            next_live.push_back({static_cast<int>(nodes_.size()) - 1, t + 1, c.log_prob});
            next_sentence.push_back(b);
            next_rows.push_back(c.row);
            next_previous.push_back(c.token);
          }
        }
        first = end;
      }
      if (next_live.empty()) break;
      if (!is_identity(next_rows, live.size())) model_.reorder(*state, next_rows);
      live = std::move(next_live);
      sentence = std::move(next_sentence);
      previous = std::move(next_previous);
    }
    return results();
  }

 private:
  static constexpr int64_t kParallelScan = 1 << 16;  // logits worth a second thread

  static bool is_identity(const std::vector<int>& rows, size_t old_rows) {
    if (rows.size() != old_rows) return false;
    for (size_t i = 0; i < rows.size(); ++i)
      if (rows[i] != static_cast<int>(i)) return false;
    return true;
  }

  // `length`: tokens of the continuing hypotheses (without </s>).
  bool sentence_done(int b, bool at_limit, const std::vector<Candidate>& continuing, int length) const {
    const auto& done = finished_[b];
    if (at_limit || continuing.empty() || static_cast<int>(done.size()) >= opt_.beam) return true;
    if (static_cast<int>(done.size()) < opt_.nbest) return false;
    const float to_beat = kth_best_score(done, opt_.nbest);
    const float alpha = opt_.length_penalty;
    for (const Candidate& c : continuing) {
      // Σ log p only falls as a hypothesis grows; ℓ lies between length + 1 and the limit + 1.
      const float reachable = std::max(length_normalised(c.log_prob, length + 1, alpha),
                                       length_normalised(c.log_prob, max_length_[b] + 1, alpha));
      if (reachable > to_beat) return false;
    }
    return true;
  }

  Hypothesis hypothesis(const Finished& f, int b) const {
    Hypothesis h;
    h.score = f.score;
    h.log_prob = f.log_prob;
    std::vector<std::pair<int, int>> producers;  // (step, row) of each token, </s> last
    producers.push_back({f.step, f.row});
    for (int n = f.node; n >= 0; n = nodes_[n].parent) {
      h.tokens.push_back(nodes_[n].token);
      producers.push_back({nodes_[n].step, nodes_[n].row});
    }
    std::reverse(h.tokens.begin(), h.tokens.end());
    std::reverse(producers.begin(), producers.end());
    // Weights over the source: its real positions; over memory rows (ntm): every row.
    const int memory = model_.memory_rows();
    const int S = memory ? memory : batch_.src_len, source_positions = memory ? memory : batch_.src_lengths[b];
    for (const auto& [step, row] : producers) {
      const Tensor& a = attention_[step];
      if (!a.defined()) {
        h.attention.clear();
        break;
      }
      const float* weights = a.data() + static_cast<int64_t>(row) * S;
      h.attention.emplace_back(weights, weights + source_positions);
    }
    return h;
  }

  std::vector<std::vector<Hypothesis>> results() const {
    std::vector<std::vector<Hypothesis>> out(batch_.size);
    for (int b = 0; b < batch_.size; ++b) {
      std::vector<Finished> done = finished_[b];
      std::stable_sort(done.begin(), done.end(),
                       [](const Finished& x, const Finished& y) { return x.score > y.score; });
      if (done.size() > size_t(opt_.nbest)) done.resize(opt_.nbest);
      for (const Finished& f : done) out[b].push_back(hypothesis(f, b));
      // Only when the model gives </s> probability 0 even at the length limit.
      if (out[b].empty()) out[b].push_back(Hypothesis{{}, kNegInf, kNegInf, {}});
    }
    return out;
  }

  Seq2Seq& model_;
  const Batch& batch_;
  const DecodingConfig& opt_;
  const bool keep_attention_;
  const SearchConstraints& constraints_;
  const int vocab_;
  const std::vector<char> allowed_;
  std::vector<int> max_length_;
  std::vector<Node> nodes_;
  std::vector<std::vector<Candidate>> row_candidates_;  // per row of the current step
  std::vector<Tensor> attention_;                       // per step: [rows of that step, S]
  std::vector<std::vector<Finished>> finished_;
};

}  // namespace

const std::vector<int32_t>& SearchConstraints::prefix(int sentence) const {
  static const std::vector<int32_t> none;
  return prefixes.empty() ? none : prefixes.at(sentence);
}

uint64_t SearchConstraints::id(int sentence) const {
  return ids.empty() ? static_cast<uint64_t>(sentence) : ids.at(sentence);
}

void SearchConstraints::check(int sentences, int vocab) const {
  const auto fits = [sentences](size_t n) { return n == 0 || n == static_cast<size_t>(sentences); };
  if (!fits(prefixes.size()) || !fits(ids.size()))
    throw Error("search: " + std::to_string(prefixes.size()) + " prefixes and " + std::to_string(ids.size()) +
                " ids for " + std::to_string(sentences) + " sentences");
  for (const auto& prefix : prefixes)
    for (int32_t token : prefix)
      if (token < 0 || token >= vocab || token == kPadId || token == kBosId || token == kEosId)
        throw Error("search: prefix token " + std::to_string(token) + " is not a word piece of the " +
                    std::to_string(vocab) + "-token target vocabulary");
}

float length_normalised(float log_prob, int length, float alpha) {
  return alpha == 0 ? log_prob : log_prob / std::pow(static_cast<float>(length), alpha);
}

Tensor step_logits(const StepOutput& out, size_t rows, int vocab, const char* search) {
  Tensor logits = out.logits.contiguous();
  if (logits.ndim() != 2 || logits.dim(0) != static_cast<int64_t>(rows) || logits.dim(1) != vocab)
    throw Error(std::string(search) + ": the model's step gave logits of shape " + shape_str(logits.shape()) +
                ", expected [" + std::to_string(rows) + ", " + std::to_string(vocab) + "]");
  return logits;
}

int max_output_length(int source_tokens, const DecodingConfig& decoding) {
  return static_cast<int>(std::ceil(decoding.max_length_ratio * static_cast<float>(source_tokens))) +
         decoding.max_length_offset;
}

int search_length_limit(const Seq2Seq& model, int source_tokens, int prefix_tokens, const DecodingConfig& decoding) {
  const int position_cap =
      model.max_target_positions() > 0 ? model.max_target_positions() - 1 : std::numeric_limits<int>::max();
  const int wanted = std::max(max_output_length(source_tokens, decoding),
                              prefix_tokens > 0 ? prefix_tokens + decoding.max_length_offset : 0);
  return std::min(wanted, position_cap);
}

std::vector<char> allowed_tokens(int vocab, const DecodingConfig& decoding) {
  std::vector<char> allowed(vocab, 1);
  for (int banned : {kPadId, kBosId})
    if (banned < vocab) allowed[banned] = 0;
  if (!decoding.allow_unk && kUnkId < vocab) allowed[kUnkId] = 0;
  return allowed;
}

std::vector<std::vector<Hypothesis>> beam_search(Seq2Seq& model, const Batch& batch, const DecodingConfig& options,
                                                 bool keep_attention, const SearchConstraints& constraints) {
  if (batch.size == 0) return {};
  constraints.check(batch.size, model.target_vocab());
  const EvalMode eval(model);
  NoGradGuard no_grad;
  return Search(model, batch, options, keep_attention, constraints).run();
}

}  // namespace heed
