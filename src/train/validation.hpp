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
#include "util/error.hpp"

namespace heed {

struct ValidationResult {
  double loss = 0, nll = 0, ppl = 0;  // per target token (incl. </s>)
  double bleu = 0;
  bool has_bleu = false;
};

// Whether a validation's metric (BLEU: higher is better; cross-entropy: lower) beats `best` (none
// yet: nullopt). A non-finite one never does: kept as the best, a NaN would never be beaten again.
bool improves_on(double metric, std::optional<double> best, ValidationMetric kind);

// A validation that failed in some process (a dev line it could not take, no memory). With
// data-parallel ranks every rank throws it together, after the reductions that each share of
// the work ends in, so that none waits in one and rank 0 can save the training.
class ValidationFailed : public Error {
 public:
  using Error::Error;
};

class Validator {
 public:
  Validator(const Config& config, const Tokenizers& tokenizers);
  // Leaves the model in eval mode. Data-parallel, a failure is ValidationFailed on every rank.
  ValidationResult run(Seq2Seq& model);

 private:
  const Config& config_;
  const Tokenizers& tokenizers_;
  ParallelCorpus corpus_;
  std::vector<std::string> sources_, references_;
};

}  // namespace heed
