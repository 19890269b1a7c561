#include "train/validation.hpp"

#include <cmath>

#include "data/batching.hpp"
#include "decode/translator.hpp"
#include "metrics/bleu.hpp"
#include "tensor/ops.hpp"
#include "tokens/special_tokens.hpp"
#include "util/error.hpp"
#include "util/text_lines.hpp"

namespace heed {

Validator::Validator(const Config& config, const Tokenizers& tokenizers) : config_(config), tokenizers_(tokenizers) {
  if (config.data.dev_src.empty() || config.data.dev_tgt.empty())
    throw UsageError("data.dev: give both data.dev.src and data.dev.tgt");
  // Every dev pair counts (no length filter); the cross-entropy needs the encoded pairs, BLEU
  // the raw text.
  corpus_ = load_parallel_corpus({config.data.dev_src}, {config.data.dev_tgt}, tokenizers, CorpusFilter{0, 0}, "")
                .corpus;
  sources_ = read_lines_utf8(config.data.dev_src);
  references_ = read_lines_utf8(config.data.dev_tgt);
}

ValidationResult Validator::run(Seq2Seq& model) {
  model.set_training(false);
  NoGradGuard no_grad;
  ValidationResult r;
  CrossEntropyStats stats;
  const int V = model.target_vocab();
  for (const auto& indices : plan_evaluation(corpus_, config_.training.batch_tokens)) {
    Batch b = make_corpus_batch(corpus_, indices);
    Var logits = model.forward(b);
    cross_entropy(reshape(logits, {-1, V}), b.tgt_out, kPadId, config_.training.label_smoothing, 1.f, &stats);
  }
  const double n = std::max<int64_t>(stats.labels, 1);
  r.loss = stats.loss_sum / n;
  r.nll = stats.nll_sum / n;
  r.ppl = std::exp(r.nll);

  if (config_.training.validation_metric == ValidationMetric::bleu) {
    DecodingConfig decoding = config_.decoding;
    decoding.beam = config_.decoding.validation_beam;
    decoding.nbest = 1;
    std::vector<std::string> hypotheses;
    for (auto& t : translate_lines(model, tokenizers_, sources_, decoding, input_length_limit(config_)))
      hypotheses.push_back(std::move(t.nbest.front().text));
    r.bleu = metrics::corpus_bleu(hypotheses, {references_}).score;
    r.has_bleu = true;
  }
  return r;
}

}  // namespace heed
