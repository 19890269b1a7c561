#pragma once
// Forced decoding: the log-probability a model gives a known translation, token by token. What
// `heed score` prints, and what users rerank n-best lists and filter corpora with. The model's
// training forward pass computes it (teacher forcing), batched like translation; tests check it
// against the scores beam search gives its own hypotheses.
#include <cstdint>
#include <vector>

#include "config/config.hpp"
#include "models/seq2seq.hpp"

namespace heed {

struct ForcedScore {
  std::vector<float> token_log_probs;  // log p of each target token, then of </s>
  float log_prob = 0;                  // their sum
  float score = 0;                     // log_prob / (tokens + 1)^length_penalty, as beam search scores
};

// One score per (source, target) pair, in order. Ids without specials. Batches are cut by
// decoding.batch_size or batch_tokens (padded target positions), and kept small enough that a
// batch's [B, T, V] log-probabilities stay bounded. A sentence longer than the model's positions
// is a heed::Error naming its index (0-based): a score is never of a cut sentence.
std::vector<ForcedScore> forced_scores(Seq2Seq& model, const std::vector<std::vector<int32_t>>& sources,
                                       const std::vector<std::vector<int32_t>>& targets,
                                       const DecodingConfig& decoding);

}  // namespace heed
