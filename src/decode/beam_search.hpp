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
//   * a sentence with a prefix (SearchConstraints) has one hypothesis while its prefix tokens are
//     forced, one a step, each scored with its log-probability; the search then goes on as above,
//     and the length limit is at least the prefix plus max_length_offset (a prefix longer than
//     the model's decoder positions ends at them);
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

// What a search may be told about each sentence besides its source. Either list may be empty:
// no prefixes; ids 0, 1, 2, ... by position in the batch.
struct SearchConstraints {
  // Target tokens (no specials) each output must start with; the search continues after them.
  std::vector<std::vector<int32_t>> prefixes;
  // Sampling: a sentence's draws are seeded by (decoding.sampling_seed, its id), so that a sample
  // does not depend on the batch or thread it is drawn in. translate uses the input line number.
  std::vector<uint64_t> ids;

  const std::vector<int32_t>& prefix(int sentence) const;  // empty when none
  uint64_t id(int sentence) const;
  // heed::Error unless the lists fit a batch of `sentences` and the prefixes' tokens a vocabulary.
  void check(int sentences, int vocab) const;
};

// log Σ_v exp(logits[v]), computed as max + log Σ exp(logit − max): a row's log-softmax is its
// logits minus this. The search normalises each step's logits with it. -inf for a row of -inf
// only; NaN when a logit is NaN.
float log_normaliser(const float* logits, int vocab);

// A hypothesis' score: log_prob / length^alpha, length with </s>; alpha = 0 gives log_prob.
float length_normalised(float log_prob, int length, float alpha);

// A step's logits, dense, checked to be [rows, vocab] (heed::Error naming `search` otherwise).
Tensor step_logits(const StepOutput& out, size_t rows, int vocab, const char* search);

// Longest output (tokens before </s>) allowed for a source of `source_tokens` tokens (no </s>).
int max_output_length(int source_tokens, const DecodingConfig& decoding);

// The same for one sentence of a search: at least its prefix plus max_length_offset, and within
// the model's decoder positions (step t feeds position t and </s> is forced at the limit, so a
// model with P positions allows P - 1 tokens before </s>).
int search_length_limit(const Seq2Seq& model, int source_tokens, int prefix_tokens, const DecodingConfig& decoding);

// Tokens a search may produce: all but <pad> and <s>, and <unk> only with decoding.allow_unk.
std::vector<char> allowed_tokens(int vocab, const DecodingConfig& decoding);

// The decoding.nbest best hypotheses of each sentence of `batch` (in batch order), best first,
// with the decoding section's beam, length penalty, length limit and allow_unk (validated when
// the config loaded). Runs with the model in eval mode and without gradients; the model's
// training flag is restored afterwards. keep_attention: keep each hypothesis' attention rows
// (alignments, attention maps); they cost S floats per live hypothesis and step, so that a long
// line's search holds O(S²) of them: off when unused.
std::vector<std::vector<Hypothesis>> beam_search(Seq2Seq& model, const Batch& batch, const DecodingConfig& decoding,
                                                 bool keep_attention = true,
                                                 const SearchConstraints& constraints = {});

}  // namespace heed
