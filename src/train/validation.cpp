#include "train/validation.hpp"

#include <spdlog/spdlog.h>

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
  const DataConfig& data = config.data;
  if (data.dev_src.empty() || data.dev_tgt.empty())
    throw UsageError("data.dev: give both data.dev.src and data.dev.tgt");
  // The cross-entropy needs the encoded pairs, BLEU the raw text. Lengths are handled as in
  // training and translation: the cross-entropy leaves out (and counts) pairs longer than
  // data.max_length, as training skips them; BLEU translates every line, its source cut to
  // data.max_length tokens, as `heed translate` does. No dev line can stop the run.
  const LoadedCorpus dev =
      load_parallel_corpus({data.dev_src}, {data.dev_tgt}, tokenizers, CorpusFilter{data.max_length, 0}, "");
  corpus_ = dev.corpus;
  sources_ = read_lines_utf8(data.dev_src);
  references_ = read_lines_utf8(data.dev_tgt);
  if (dev.stats.kept == 0)
    throw Error("data.dev: no usable pairs in " + data.dev_src + " and " + data.dev_tgt + " (" +
                std::to_string(dev.stats.pairs_read) + " lines: " + std::to_string(dev.stats.skipped_empty) +
                " with an empty side, " + std::to_string(dev.stats.skipped_too_long) + " longer than data.max_length " +
                std::to_string(data.max_length) + ")");
  spdlog::info(
      "dev set: {} pairs; cross-entropy on {} ({} with an empty side, {} longer than data.max_length {} "
      "left out); BLEU on all {} lines",
      dev.stats.pairs_read, dev.stats.kept, dev.stats.skipped_empty, dev.stats.skipped_too_long, data.max_length,
      sources_.size());
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
