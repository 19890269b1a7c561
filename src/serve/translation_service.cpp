#include "serve/translation_service.hpp"

#include <malloc.h>
#include <omp.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>
#include <memory>
#include <string>

#include "serve/decode_batch.hpp"
#include "serve/spin_wait.hpp"
#include "tensor/dnnl_context.hpp"
#include "util/error.hpp"
#include "util/text_lines.hpp"

namespace heed::serve {
namespace {

// Counts the requests waiting for their sentences while it lives.
class WaitingRequest {
 public:
  explicit WaitingRequest(std::atomic<int>& count) : count_(count), alone_(++count == 1) {}
  ~WaitingRequest() { --count_; }
  WaitingRequest(const WaitingRequest&) = delete;
  WaitingRequest& operator=(const WaitingRequest&) = delete;
  bool alone() const { return alone_; }

 private:
  std::atomic<int>& count_;
  const bool alone_;
};

size_t longest_piece(const Tokenizer& tokenizer) {
  size_t longest = 1;  // a byte token
  for (int id = 0; id < tokenizer.vocab_size(); ++id) longest = std::max(longest, tokenizer.piece(id).size());
  return longest;
}

}  // namespace

TranslationService::TranslationService(Seq2Seq& model, const Tokenizers& tokenizers, const DecodingConfig& defaults,
                                       const ServiceOptions& options, Metrics& metrics)
    : model_(model),
      tokenizers_(tokenizers),
      defaults_(defaults),
      options_(options),
      longest_piece_(longest_piece(tokenizers.source())),
      metrics_(metrics),
      hold_(model),
      eval_(model),
      queue_(options.batching, [] { malloc_trim(0); }) {
  for (int w = 0; w < std::max(1, options_.workers); ++w) workers_.emplace_back([this] { work(); });
}

TranslationService::~TranslationService() { drain(); }

void TranslationService::drain() {
  queue_.close();
  for (auto& w : workers_)
    if (w.joinable()) w.join();
}

std::vector<TranslationResult> TranslationService::translate(const TranslateRequest& request,
                                                             Clock::time_point deadline) {
  auto job = std::make_shared<Job>();
  job->key = {request.beam, request.nbest};
  job->alignment = request.alignment;
  job->sources.resize(request.text.size());
  job->results.resize(request.text.size());
  for (size_t i = 0; i < request.text.size(); ++i) {
    const std::string field = "text[" + std::to_string(i) + "]";
    const std::string_view text = trim_space(request.text[i]);
    // Every byte but a space stands in one token, at most longest_piece_ to a token: a sentence
    // with more is over the limit untokenized (and a word of a megabyte would leave this thread's
    // tokenizing buffers that large).
    const size_t letters = text.size() - static_cast<size_t>(std::count(text.begin(), text.end(), ' '));
    if (letters > static_cast<size_t>(options_.max_sentence_tokens) * longest_piece_)
      throw RequestError(413, field,
                         field + ": " + std::to_string(letters) + " bytes other than spaces, more than " +
                             std::to_string(options_.max_sentence_tokens) + " tokens hold (at most " +
                             std::to_string(longest_piece_) + " bytes each): over the limit of " +
                             std::to_string(options_.max_sentence_tokens) + " per sentence");
    // On the HTTP server's connection thread: uncached, since a word cache on each of its tens of
    // threads would hold as many copies of the same words (up to 2^17 words each).
    const std::vector<int> ids = tokenizers_.source().encode_uncached(text);
    if (static_cast<int>(ids.size()) > options_.max_sentence_tokens) {
      throw RequestError(413, field,
                         field + ": " + std::to_string(ids.size()) + " tokens, over the limit of " +
                             std::to_string(options_.max_sentence_tokens) + " per sentence");
    }
    job->sources[i].assign(ids.begin(), ids.end());
    if (!ids.empty()) ++job->remaining;
  }

  if (job->remaining > 0) {
    if (!queue_.push(job)) throw RequestError(503, "", "the server is shutting down");
    // A lone request polls for its answer first (serve/spin_wait.hpp); with others waiting too,
    // the CPU is better left to the workers.
    const WaitingRequest waiting(waiting_requests_);
    if (waiting.alone() && options_.lone_request_spin.count() > 0 &&
        spin_until(
            [&] {
              const std::lock_guard<std::mutex> lock(job->mutex);
              return job->remaining == 0;
            },
            std::min(options_.lone_request_spin,
                     std::chrono::duration_cast<std::chrono::microseconds>(deadline - Clock::now()))))
      ++lone_spin_hits_;
    std::unique_lock<std::mutex> lock(job->mutex);
    if (!job->done.wait_until(lock, deadline, [&] { return job->remaining == 0; })) {
      lock.unlock();
      queue_.remove(job.get());  // sentences already in a batch finish there, unseen
      throw RequestError(503, "", "the request timed out before its sentences were translated");
    }
    if (!job->failure.empty()) throw Error("decoding failed: " + job->failure);
  }

  std::vector<TranslationResult> results(request.text.size());
  for (size_t i = 0; i < results.size(); ++i) {
    TranslationResult& r = results[i];
    r.source_tokens = std::move(job->sources[i]);
    r.original_length = static_cast<int>(r.source_tokens.size());
    if (r.source_tokens.empty())
      r.nbest.emplace_back();
    else
      r.nbest = std::move(job->results[i]);
  }
  return results;
}

namespace {
// Batches between two malloc_trim calls of a worker under load: each batch frees tensors of its
// own sizes, and glibc keeps the gaps they leave (heed turns its trimming off for training's sake,
// see tensor.cpp), so a busy server's heap would creep up over many batch shapes. A trim takes a
// few milliseconds (after every batch it halved the throughput of small batches); a batch at
// least a few. At rest the queue trims too (the service's on_rest), so an idle server holds only
// what it uses.
constexpr int kBatchesPerTrim = 256;
}  // namespace

void TranslationService::work() {
  omp_set_num_threads(1);  // this worker's own products and loops: one batch per thread
  for (int batches = 1;; ++batches) {
    std::vector<QueuedSentence> batch;
    try {
      batch = queue_.pop_batch();
    } catch (const std::exception& e) {  // out of memory: the batch's requests will time out
      spdlog::error("decoding worker: {}", e.what());
      continue;
    }
    if (batch.empty()) return;
    const SearchKey key = batch.front().job->key;
    bool keep_attention = false;
    for (const QueuedSentence& q : batch) keep_attention = keep_attention || q.job->alignment;
    std::vector<std::vector<Translation>> out;
    std::string failure;
    try {  // from the copies of the sources on: out of memory fails this batch's requests, not the server
      std::vector<std::vector<int32_t>> sources;
      for (const QueuedSentence& q : batch) sources.push_back(q.job->sources[q.index]);
      out = decode_batch(model_, tokenizers_.target(), sources, request_search(defaults_, key.beam, key.nbest),
                         keep_attention);
    } catch (const std::exception& e) {
      failure = e.what()[0] ? e.what() : "unknown error";
    } catch (...) {
      failure = "unknown error";
    }
    queue_.batch_done();
    metrics_.batch_done(batch.size());
    // Batches of ever new shapes would make this worker's primitives grow without end.
    if (dnnl_ctx::cached_primitives() > options_.max_cached_primitives) {
      spdlog::debug("decoding worker: dropping {} cached primitives", dnnl_ctx::cached_primitives());
      dnnl_ctx::drop_cached_primitives();
    }
    for (size_t k = 0; k < batch.size(); ++k) {
      Job& job = *batch[k].job;
      const std::lock_guard<std::mutex> lock(job.mutex);
      if (failure.empty()) {
        if (!job.alignment)  // kept for another job of the batch
          for (Translation& t : out[k]) t.attention = {};
        job.results[batch[k].index] = std::move(out[k]);
      } else
        job.failure = failure;
      if (--job.remaining == 0) job.done.notify_all();
    }
    if (batches % kBatchesPerTrim == 0) malloc_trim(0);  // after answering: no request waits for it
  }
}

}  // namespace heed::serve
