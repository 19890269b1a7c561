#include "decode/translator.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <numeric>

#include "decode/sampling.hpp"
#include "tokens/batch.hpp"
#include "util/error.hpp"
#include "util/interrupt.hpp"
#include "util/text_lines.hpp"
#include "util/threads.hpp"

namespace heed {
namespace {

// Positions of the non-empty inputs, longest first (stable: equal lengths keep input order), cut
// into batches by sentence count or by padded source tokens.
std::vector<std::vector<size_t>> make_batches(const std::vector<TranslationResult>& results,
                                              const DecodingConfig& batching) {
  std::vector<size_t> order;
  for (size_t i = 0; i < results.size(); ++i)
    if (!results[i].source_tokens.empty()) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return results[a].source_tokens.size() > results[b].source_tokens.size();
  });
  std::vector<std::vector<size_t>> batches;
  size_t padded_length = 0;  // of the current batch: its first (longest) sentence + </s>
  for (size_t i : order) {
    const size_t padded_if_added = batches.empty() ? 0 : (batches.back().size() + 1) * padded_length;
    const bool full = batches.empty() || padded_if_added > size_t(kMaxBatchSourceTokens) ||
                      (batching.batch_tokens > 0 ? padded_if_added > size_t(batching.batch_tokens)
                                                 : batches.back().size() >= size_t(batching.batch_size));
    if (full) {
      batches.emplace_back();
      padded_length = results[i].source_tokens.size() + 1;
    }
    batches.back().push_back(i);
  }
  return batches;
}

}  // namespace

int input_token_limit(const Seq2Seq& model, int max_input_length) {
  int limit = kMaxInputTokens;
  if (max_input_length > 0) limit = std::min(limit, max_input_length);
  if (model.max_source_positions() > 0) limit = std::min(limit, model.max_source_positions() - 1);
  return std::max(limit, 1);
}

Translation to_translation(const Tokenizer& target, const Hypothesis& h) {
  Translation t;
  t.text = target.decode(std::vector<int>(h.tokens.begin(), h.tokens.end()));
  t.tokens = h.tokens;
  t.score = h.score;
  t.log_prob = h.log_prob;
  t.attention = h.attention;
  return t;
}

std::vector<TranslationResult> translate_lines(Seq2Seq& model, const Tokenizers& tokenizers,
                                               const std::vector<std::string>& lines, const DecodingConfig& decoding,
                                               int max_input_length, bool keep_attention,
                                               const LineConstraints& constraints) {
  if (!constraints.prefixes.empty() && constraints.prefixes.size() != lines.size())
    throw Error("translate: " + std::to_string(constraints.prefixes.size()) + " prefixes for " +
                std::to_string(lines.size()) + " lines");
  const Tokenizer& source = tokenizers.source();
  const Tokenizer& target = tokenizers.target();
  const int limit = input_token_limit(model, max_input_length);

  std::vector<TranslationResult> results(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    TranslationResult& r = results[i];
    const std::string_view text = trim_space(lines[i]);  // as training read its sources
    if (!text.empty()) {
      std::vector<int> ids = source.encode(text);
      r.source_tokens.assign(ids.begin(), ids.end());
    }
    r.original_length = static_cast<int>(r.source_tokens.size());
    if (r.original_length > limit) {
      r.source_tokens.resize(limit);
      r.truncated = true;
    }
    if (r.source_tokens.empty()) r.nbest.emplace_back();  // empty line (or one that encodes to nothing)
  }

  const StepWeightsHold hold(model);  // the parameters stay as they are until every batch is done
  const EvalMode eval(model);         // set once here: the workers only read it
  const auto batches = make_batches(results, decoding);
  auto translate_batch = [&](const std::vector<size_t>& members) {
    throw_if_interrupted();
    std::vector<std::vector<int32_t>> sources;
    SearchConstraints search_constraints;
    for (size_t i : members) {
      sources.push_back(results[i].source_tokens);
      search_constraints.ids.push_back(constraints.first_line + i);
      if (!constraints.prefixes.empty()) search_constraints.prefixes.push_back(constraints.prefixes[i]);
    }
    const auto hypotheses = search(model, make_batch(sources, {}), decoding, keep_attention, search_constraints);
    for (size_t k = 0; k < members.size(); ++k) {
      auto& nbest = results[members[k]].nbest;
      for (const Hypothesis& h : hypotheses[k]) {
        nbest.push_back(to_translation(target, h));
      }
    }
  };
  // With several threads, each takes whole batches in turn (longest first) and runs them alone: a
  // step's products are too small to split between threads without them waiting on each other.
  // A batch's result does not depend on which thread ran it or with how many.
  const int workers = static_cast<int>(std::min<size_t>(num_threads(), batches.size()));
  if (workers <= 1) {
    for (const auto& members : batches) translate_batch(members);
    return results;
  }
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
#pragma omp parallel num_threads(workers)
  {
    omp_set_num_threads(1);  // this worker's own products and loops
    for (size_t b; (b = next++) < batches.size();) {
      try {
        translate_batch(batches[b]);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        next = batches.size();  // the other workers stop after their current batch
      }
    }
  }
  if (failure) std::rethrow_exception(failure);
  return results;
}

}  // namespace heed
