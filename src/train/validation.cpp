#include "train/validation.hpp"

#include <spdlog/spdlog.h>

#include <cmath>
#include <new>

#include "data/batching.hpp"
#include "decode/translator.hpp"
#include "dist/process_group.hpp"
#include "metrics/bleu.hpp"
#include "tensor/ops.hpp"
#include "tokens/special_tokens.hpp"
#include "util/error.hpp"
#include "util/text_lines.hpp"

namespace heed {
namespace {

// Runs `share`, this process's part of a validation; returns its failure (none: empty). One
// process has nothing to share: its exceptions go on as they are.
template <typename Share>
std::string failure_of(Share&& share) {
  if (dist::size() == 1) {
    share();
    return {};
  }
  try {
    share();  // ranks defer interrupts to the end of a validation: none comes from here
  } catch (const std::bad_alloc&) {
    return "out of memory";
  } catch (const std::exception& e) {
    return e.what()[0] ? e.what() : "unknown error";
  } catch (...) {
    return "unknown error";
  }
  return {};
}

// After a reduction whose count of failed processes is `failed`: every process throws when any
// failed, this one with its own message, the others naming it as another's.
void throw_if_failed(double failed, const std::string& mine) {
  if (failed == 0) return;
  throw ValidationFailed(mine.empty() ? "validation failed in another process (its log has the error)" : mine);
}

}  // namespace

bool improves_on(double metric, std::optional<double> best, ValidationMetric kind) {
  if (!std::isfinite(metric)) return false;
  if (!best) return true;
  return kind == ValidationMetric::bleu ? metric > *best : metric < *best;
}

Validator::Validator(const Config& config, const Tokenizers& tokenizers) : config_(config), tokenizers_(tokenizers) {
  const DataConfig& data = config.data;
  if (data.dev_src.empty() || data.dev_tgt.empty())
    throw UsageError("data.dev: give both data.dev.src and data.dev.tgt");
  // The cross-entropy needs the encoded pairs, BLEU the raw text. Lengths are handled as in
  // training and translation: the cross-entropy leaves out (and counts) pairs longer than
  // data.max_length, as training skips them; BLEU translates every line, its source cut to
  // data.max_length tokens, as `heed translate` does. No dev line can stop the run.
  // training.validation_lines: the first lines only, for both (the files must still pair up).
  const auto first_lines = static_cast<size_t>(config.training.validation_lines);
  const LoadedCorpus dev = load_parallel_corpus({data.dev_src}, {data.dev_tgt}, tokenizers,
                                                CorpusFilter{data.max_length, 0, first_lines}, "");
  corpus_ = dev.corpus;
  sources_ = read_lines_utf8(data.dev_src);
  references_ = read_lines_utf8(data.dev_tgt);
  if (references_.size() != sources_.size())
    throw Error("data.dev: " + data.dev_src + " has " + std::to_string(sources_.size()) + " lines but " + data.dev_tgt +
                " has " + std::to_string(references_.size()));
  const size_t all_lines = sources_.size();
  if (first_lines > 0 && first_lines < all_lines) {
    sources_.resize(first_lines);
    references_.resize(first_lines);
  }
  if (dev.stats.kept == 0)
    throw Error("data.dev: no usable pairs in " + data.dev_src + " and " + data.dev_tgt + " (" +
                std::to_string(dev.stats.pairs_read) + " lines: " + std::to_string(dev.stats.skipped_empty) +
                " with an empty side, " + std::to_string(dev.stats.skipped_too_long) + " longer than data.max_length " +
                std::to_string(data.max_length) + ")");
  spdlog::info(
      "dev set: {} pairs{}; cross-entropy on {} ({} with an empty side, {} longer than data.max_length {} "
      "left out); BLEU on all {} lines",
      dev.stats.pairs_read,
      sources_.size() < all_lines ? fmt::format(" (the first of {} lines: training.validation_lines)", all_lines) : "",
      dev.stats.kept, dev.stats.skipped_empty, dev.stats.skipped_too_long, data.max_length,
      sources_.size());
}

ValidationResult Validator::run(Seq2Seq& model) {
  model.set_training(false);
  NoGradGuard no_grad;
  ValidationResult r;
  CrossEntropyStats stats;
  const int V = model.target_vocab();
  // Data-parallel: rank r takes every N-th batch and lines [r * L / N, (r + 1) * L / N); the sums
  // are reduced, so every rank gets the same result.
  const int rank = dist::rank(), ranks = dist::size();
  const auto plan = plan_evaluation(corpus_, config_.training.batch_tokens);
  std::string failure = failure_of([&] {
    for (size_t i = rank; i < plan.size(); i += ranks) {
      Batch b = make_corpus_batch(corpus_, plan[i]);
      Var logits = model.forward(b);
      cross_entropy(reshape(logits, {-1, V}), b.tgt_out, kPadId, config_.training.label_smoothing, 1.f, &stats);
    }
  });
  double sums[4] = {stats.loss_sum, stats.nll_sum, static_cast<double>(stats.labels), failure.empty() ? 0.0 : 1.0};
  dist::all_reduce_sum(sums, 4);
  throw_if_failed(sums[3], failure);
  const double n = std::max(sums[2], 1.0);
  r.loss = sums[0] / n;
  r.nll = sums[1] / n;
  r.ppl = std::exp(r.nll);

  if (config_.training.validation_metric == ValidationMetric::bleu) {
    DecodingConfig decoding = config_.decoding;
    decoding.beam = config_.decoding.validation_beam;
    decoding.nbest = 1;
    decoding.sampling = {};  // dev BLEU is a beam search's, whatever translate is set to do
    const size_t begin = sources_.size() * rank / ranks, end = sources_.size() * (rank + 1) / ranks;
    const std::vector<std::string> shard(sources_.begin() + begin, sources_.begin() + end);
    metrics::BleuSegmentScorer scorer({});
    metrics::BleuStats bleu;
    size_t line = begin;
    failure = failure_of([&] {
      for (auto& t : translate_lines(model, tokenizers_, shard, decoding, input_length_limit(config_)))
        bleu += scorer.stats(t.nbest.front().text, {references_[line++]});
    });
    std::vector<double> counts{static_cast<double>(bleu.sys_len), static_cast<double>(bleu.ref_len)};
    for (int k = 0; k < metrics::kBleuMaxOrder; ++k) {
      counts.push_back(static_cast<double>(bleu.counts[k]));
      counts.push_back(static_cast<double>(bleu.totals[k]));
    }
    counts.push_back(failure.empty() ? 0.0 : 1.0);
    dist::all_reduce_sum(counts.data(), counts.size());  // integers: exact in doubles
    throw_if_failed(counts.back(), failure);
    bleu.sys_len = static_cast<int64_t>(counts[0]);
    bleu.ref_len = static_cast<int64_t>(counts[1]);
    for (int k = 0; k < metrics::kBleuMaxOrder; ++k) {
      bleu.counts[k] = static_cast<int64_t>(counts[2 + 2 * k]);
      bleu.totals[k] = static_cast<int64_t>(counts[3 + 2 * k]);
    }
    r.bleu = metrics::bleu_from_stats(bleu, {}).score;
    r.has_bleu = true;
  }
  return r;
}

}  // namespace heed
