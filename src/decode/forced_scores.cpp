#include "decode/forced_scores.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "decode/beam_search.hpp"
#include "tokens/batch.hpp"
#include "util/error.hpp"
#include "util/interrupt.hpp"

namespace heed {
namespace {

// Target positions × vocabulary of one batch's log-probabilities, at most (64 M floats).
constexpr int64_t kMaxBatchLogits = int64_t{1} << 26;

void check_length(size_t index, const char* side, size_t tokens, int positions) {
  // A sentence takes its tokens plus one position (</s> on the source side, <s> on the target).
  if (positions > 0 && tokens + 1 > static_cast<size_t>(positions))
    throw Error("pair " + std::to_string(index) + ": the " + side + " has " + std::to_string(tokens) +
                " tokens; the model takes at most " + std::to_string(positions - 1));
}

}  // namespace

std::vector<ForcedScore> forced_scores(Seq2Seq& model, const std::vector<std::vector<int32_t>>& sources,
                                       const std::vector<std::vector<int32_t>>& targets,
                                       const DecodingConfig& decoding) {
  if (sources.size() != targets.size())
    throw Error("forced scores: " + std::to_string(sources.size()) + " sources but " + std::to_string(targets.size()) +
                " targets");
  const int vocab = model.target_vocab();
  for (size_t i = 0; i < sources.size(); ++i) {
    check_length(i, "source", sources[i].size(), model.max_source_positions());
    check_length(i, "target", targets[i].size(), model.max_target_positions());
    for (int32_t t : targets[i])
      if (t < 0 || t >= vocab)
        throw Error("pair " + std::to_string(i) + ": target token " + std::to_string(t) + " is outside the " +
                    std::to_string(vocab) + "-token vocabulary");
  }

  // Longest target first (stable), cut into batches.
  std::vector<size_t> order(sources.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return targets[a].size() > targets[b].size(); });
  const int64_t max_positions = std::max<int64_t>(1, kMaxBatchLogits / vocab);
  std::vector<std::vector<size_t>> batches;
  int64_t padded = 0;  // target positions of the current batch's first (longest) pair, with </s>
  for (size_t i : order) {
    const int64_t if_added = batches.empty() ? 0 : static_cast<int64_t>(batches.back().size() + 1) * padded;
    const bool full = batches.empty() || if_added > max_positions ||
                      (decoding.batch_tokens > 0 ? if_added > decoding.batch_tokens
                                                 : batches.back().size() >= static_cast<size_t>(decoding.batch_size));
    if (full) {
      batches.emplace_back();
      padded = static_cast<int64_t>(targets[i].size()) + 1;
    }
    batches.back().push_back(i);
  }

  std::vector<ForcedScore> out(sources.size());
  const EvalMode eval(model);
  NoGradGuard no_grad;
  for (const auto& members : batches) {
    throw_if_interrupted();
    std::vector<std::vector<int32_t>> src, tgt;
    for (size_t i : members) {
      src.push_back(sources[i]);
      tgt.push_back(targets[i]);
    }
    const Batch batch = make_batch(src, tgt);
    const Tensor logits = model.forward(batch).value().contiguous();  // [B, T, V]
    for (size_t k = 0; k < members.size(); ++k) {
      ForcedScore& s = out[members[k]];
      for (int t = 0; t < batch.tgt_lengths[k]; ++t) {
        const float* row = logits.data() + (static_cast<int64_t>(k) * batch.tgt_len + t) * vocab;
        const float lp = row[batch.tgt_out[k * batch.tgt_len + t]] - log_normaliser(row, vocab);
        s.token_log_probs.push_back(lp);
        s.log_prob += lp;
      }
      s.score = length_normalised(s.log_prob, static_cast<int>(s.token_log_probs.size()), decoding.length_penalty);
    }
  }
  return out;
}

}  // namespace heed
