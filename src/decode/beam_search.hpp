#pragma once
// Beam search over the Seq2Seq interface, batched across sentences and beams: one step() call per
// time step for every live hypothesis of every sentence in the batch.
//
// Rules (those of the PyTorch reference, tests/fixtures/golden/torch_nmt.py, plus a safe early stop):
//   * score of a finished hypothesis = Σ log p / ℓ^α, ℓ = its length including </s>,
//     α = length_penalty (0 = plain sum of log-probabilities);
//   * each step takes the 2K best extensions per sentence (by Σ log p); those ending in </s> among
//     the best K finish and leave the beam (they are kept), the best K not ending in </s> continue;
//   * a sentence stops when K hypotheses have finished, when no live hypothesis can still beat
//     the nbest-th best finished one (its best reachable score is Σ log p / ℓ_max^α: log p only
//     falls as it grows, ℓ can grow up to the length limit), or at the length limit, where </s>
//     is the only token allowed;
//   * length limit: at most ⌈max_length_ratio · n⌉ + max_length_offset tokens before </s>, n the
//     number of source tokens without </s>;
//   * <pad> and <s> are never produced, <unk> only with allow_unk;
//   * finished sentences leave the batch (their rows are dropped with reorder()).
// The model's step gives logits; the search normalises them itself, row by row, fused with its
// scan for the best extensions, so no [rows, V] log-probabilities are written.
// Ties are broken by the hypothesis' rank in the previous step, then by token id, so a sentence's
// result does not depend on the other sentences of its batch. K = 1 is greedy search.
#include <cstdint>
#include <vector>

#include "config/config.hpp"
#include "models/seq2seq.hpp"
#include "tokens/batch.hpp"

namespace heed {

struct Hypothesis {
  std::vector<int32_t> tokens;  // without </s>
  float score = 0;              // log_prob / (tokens.size() + 1)^length_penalty
  float log_prob = 0;           // Σ log p of the tokens and </s>
  // One row per output token including </s>: the attention over the sentence's real source
  // positions (its tokens and </s>), empty when the model gives no attention or the search was
  // asked not to keep it.
  std::vector<std::vector<float>> attention;
};

// log Σ_v exp(logits[v]), computed as max + log Σ exp(logit − max): a row's log-softmax is its
// logits minus this. The search normalises each step's logits with it. -inf for a row of -inf
// only; NaN when a logit is NaN.
float log_normaliser(const float* logits, int vocab);

// Longest output (tokens before </s>) allowed for a source of `source_tokens` tokens (no </s>).
int max_output_length(int source_tokens, const DecodingConfig& decoding);

// The decoding.nbest best hypotheses of each sentence of `batch` (in batch order), best first,
// with the decoding section's beam, length penalty, length limit and allow_unk (validated when
// the config loaded). Runs with the model in eval mode and without gradients; the model's
// training flag is restored afterwards. keep_attention: keep each hypothesis' attention rows
// (alignments, attention maps); they cost S floats per live hypothesis and step, so that a long
// line's search holds O(S²) of them: off when unused.
std::vector<std::vector<Hypothesis>> beam_search(Seq2Seq& model, const Batch& batch, const DecodingConfig& decoding,
                                                 bool keep_attention = true);

}  // namespace heed
