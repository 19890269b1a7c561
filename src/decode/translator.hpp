#pragma once
// Lines of raw text in, translations out, in input order: tokenise, sort by length, cut into
// batches, beam-search each batch, detokenise. No files involved, so that `heed translate` and the
// trainer's validation (dev BLEU) share it.
#include <cstdint>
#include <string>
#include <vector>

#include "decode/beam_search.hpp"
#include "models/seq2seq.hpp"
#include "text/tokenizers.hpp"

namespace heed {

struct Translation {
  std::string text;
  std::vector<int32_t> tokens;                // target ids without </s>
  float score = 0, log_prob = 0;              // see Hypothesis; 0 for an empty input line
  std::vector<std::vector<float>> attention;  // see Hypothesis
};

struct TranslationResult {
  std::vector<int32_t> source_tokens;  // as translated (after truncation), without </s>
  int original_length = 0;             // source tokens before truncation
  bool truncated = false;
  std::vector<Translation> nbest;  // best first; one empty translation for an empty line
};

// Padded source tokens a batch may hold whatever the batching settings: long lines go in small
// batches, so that a batch's states stay bounded too.
constexpr int kMaxBatchSourceTokens = 8192;

// A hypothesis as text (detokenized by `target`) with its tokens, scores and attention.
Translation to_translation(const Tokenizer& target, const Hypothesis& h);

// The length inputs are cut to: max_input_length (0: none; see input_length_limit in
// config.hpp), what the model's positions hold (a source and its </s>) and kMaxInputTokens,
// whichever is least.
int input_token_limit(const Seq2Seq& model, int max_input_length);

// What translate_lines may be told about its lines besides their text.
struct LineConstraints {
  // One target prefix per line (the target tokenizer's ids; empty = none), or none at all. Each
  // translation starts with its prefix; see SearchConstraints.
  std::vector<std::vector<int32_t>> prefixes;
  // Number of lines before these in the input: line i's samples are seeded by first_line + i.
  uint64_t first_line = 0;
};

// One result per line, in the order of `lines`, found with `decoding` (beam search or sampling;
// its batch_size or batch_tokens cut the batches). An empty line is not given to the model: its
// result is one empty translation with score 0, even with a prefix. A line longer than
// input_token_limit() is cut to it, never an error: one long line does not stop the others.
// keep_attention: see beam_search.
std::vector<TranslationResult> translate_lines(Seq2Seq& model, const Tokenizers& tokenizers,
                                               const std::vector<std::string>& lines, const DecodingConfig& decoding,
                                               int max_input_length, bool keep_attention = true,
                                               const LineConstraints& constraints = {});

}  // namespace heed
