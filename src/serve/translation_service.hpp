#pragma once
// Translation with dynamic batching: requests hand their sentences to a BatchQueue, and
// `workers` decoding threads take batches from it, one batch per thread at a time as
// `heed translate` runs them (a step's products are too small to share between threads). Each
// request is answered as soon as the batches holding its sentences are done.
//
// The model is shared read-only: the service holds its step weights (StepWeightsHold) and
// evaluation mode (EvalMode) from construction to destruction, so the workers' searches only
// read them; each worker runs with one OpenMP thread and its own (thread-local) primitives.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "decode/beam_search.hpp"
#include "decode/translator.hpp"
#include "models/seq2seq.hpp"
#include "serve/batch_queue.hpp"
#include "serve/metrics.hpp"
#include "serve/request.hpp"
#include "text/tokenizers.hpp"

namespace heed::serve {

struct ServiceOptions {
  int workers = 1;
  BatchPolicy batching;
  int max_sentence_tokens = 100;  // source tokens per sentence; longer ones are refused (413)
  // Primitives a worker keeps (some 40 KB each) before it drops them all and makes anew those
  // the next batches need (a few hundred: well under a second). The GRU's decoding primitives
  // come from bounded sets of sizes (tensor/ops/row_pieces.hpp), so its workers stay below this
  // (no drop in 24,000 requests of 32 clients); the Transformer's attention products still take
  // exact shapes, and for them this bound is what keeps memory from growing without end.
  size_t max_cached_primitives = 256;
  // How long a request that is the only one waiting polls for its translations before it sleeps
  // (serve/spin_wait.hpp): most single sentences are decoded within a few milliseconds.
  std::chrono::microseconds lone_request_spin{5000};
};

class TranslationService {
 public:
  // `defaults` are the model's decoding settings; a request sets beam and n-best only.
  TranslationService(Seq2Seq& model, const Tokenizers& tokenizers, const DecodingConfig& defaults,
                     const ServiceOptions& options, Metrics& metrics);
  ~TranslationService();  // drains
  TranslationService(const TranslationService&) = delete;
  TranslationService& operator=(const TranslationService&) = delete;

  // One result per request sentence, in order (an empty sentence: one empty translation, as
  // translate_lines gives). Throws RequestError: 413 naming text[i] for a sentence over the
  // length limit, 503 when `deadline` passes first or the service is draining; heed::Error when a
  // worker failed to decode.
  std::vector<TranslationResult> translate(const TranslateRequest& request, Clock::time_point deadline);

  // Decodes what is queued, then stops the workers. Later requests get 503.
  void drain();

  size_t queued_sentences() const { return queue_.size(); }
  const Tokenizers& tokenizers() const { return tokenizers_; }
  // Requests answered while polling, not sleeping: lone requests (for tests).
  uint64_t lone_spin_hits() const { return lone_spin_hits_; }

 private:
  void work();

  Seq2Seq& model_;
  const Tokenizers& tokenizers_;
  const DecodingConfig defaults_;
  const ServiceOptions options_;
  const size_t longest_piece_;  // bytes of the source vocabulary's longest piece
  Metrics& metrics_;
  const StepWeightsHold hold_;
  const EvalMode eval_;
  BatchQueue queue_;
  std::vector<std::thread> workers_;
  std::atomic<int> waiting_requests_{0};
  std::atomic<uint64_t> lone_spin_hits_{0};
};

}  // namespace heed::serve
