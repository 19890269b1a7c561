#pragma once
// Validation on the dev set: cross-entropy and perplexity (teacher forcing, no dropout) and
// BLEU of decoded output (greedy, or beam decoding.validation_beam) scored by the project's
// sacreBLEU-compatible scorer against the raw reference text.
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "data/parallel_corpus.hpp"
#include "models/seq2seq.hpp"
#include "text/tokenizers.hpp"

namespace heed {

struct ValidationResult {
  double loss = 0, nll = 0, ppl = 0;  // per target token (incl. </s>)
  double bleu = 0;
  bool has_bleu = false;
};

// Whether a validation's metric (BLEU: higher is better; cross-entropy: lower) beats `best` (none
// yet: nullopt). A non-finite one never does: kept as the best, a NaN would never be beaten again.
bool improves_on(double metric, std::optional<double> best, ValidationMetric kind);

class Validator {
 public:
  Validator(const Config& config, const Tokenizers& tokenizers);
  ValidationResult run(Seq2Seq& model);  // leaves the model in eval mode

 private:
  const Config& config_;
  const Tokenizers& tokenizers_;
  ParallelCorpus corpus_;
  std::vector<std::string> sources_, references_;
};

}  // namespace heed
