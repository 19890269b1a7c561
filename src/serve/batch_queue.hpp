#pragma once
// The dynamic batcher: sentences of concurrent requests wait here, and each decoding worker takes
// the next batch when one is due. A batch holds sentences of one search setting (SearchKey),
// always including the oldest waiting sentence (so none starves), grown with the sentences
// nearest to it in length while the padded size (sentences × longest) stays within
// max_batch_tokens.
//
// A batch is due when it is full (a sentence of its kind had to stay out), when its oldest
// sentence has waited max_wait, or when no sentence has arrived for `lull` (at most max_wait),
// so that a burst of requests can be gathered whole. On an idle server (no batch being decoded)
// a batch is due at once. By default max_wait is 0: a free worker takes what is queued, and the
// sentences that arrive while every worker decodes still make the next batch together. On a CPU
// a batch of 8 sentences decodes nearly as fast per sentence as one of 32, so a worker left idle
// waiting for company costs more than the company saves (measured: README, Serving).
//
// The server is at rest when nothing has been queued or decoded for `rest`: then one waiting
// worker runs the queue's on_rest callback, once per rest (the service gives the heap back then).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "serve/job.hpp"

namespace heed::serve {

struct BatchPolicy {
  int max_batch_tokens = 2048;  // padded source tokens (sentences × (longest + </s>))
  std::chrono::microseconds max_wait{0};
  std::chrono::microseconds lull{1000};
  // false: on an idle server a batch is due at once. true: it waits as when the server is busy
  // (tests use it to hold sentences in the queue).
  bool wait_when_idle = false;
  std::chrono::milliseconds rest{500};
  // How long a worker that found the queue empty polls it before it sleeps, one worker at a time
  // (serve/spin_wait.hpp): a lone client's next sentence comes within a millisecond of its last
  // answer. 0: sleep at once.
  std::chrono::microseconds spin{1000};
};

struct QueuedSentence {
  std::shared_ptr<Job> job;
  size_t index = 0;  // the sentence within the job
  int tokens = 0;    // its padded length: source tokens + </s>
  Clock::time_point arrival;
};

// The next batch from `queue` (in arrival order): positions in the queue, longest sentence
// first, and whether it is full.
struct Selection {
  std::vector<size_t> members;
  bool full = false;
};
Selection select_batch(const std::deque<QueuedSentence>& queue, int max_batch_tokens);

class BatchQueue {
 public:
  explicit BatchQueue(const BatchPolicy& policy, std::function<void()> on_rest = {});

  // Queues every sentence of the job that has tokens to decode; false once closed.
  bool push(const std::shared_ptr<Job>& job);
  // Blocks until a batch is due and returns it; empty once the queue is closed and empty. The
  // caller decodes it, then calls batch_done(). While it waits, it may run on_rest.
  std::vector<QueuedSentence> pop_batch();
  void batch_done();
  // Drops the job's waiting sentences (a request that timed out); returns how many.
  size_t remove(const Job* job);
  // Draining: nothing waits for a fuller batch any more, and pop_batch ends when all is taken.
  void close();
  size_t size() const;
  // pop_batch calls that found their sentences while polling, not sleeping, and whether a worker
  // is polling now (for tests).
  uint64_t spin_hits() const;
  bool polling() const;

 private:
  // Waits while the queue is empty, running on_rest (unlocked) when the server comes to rest.
  void wait_for_sentences(std::unique_lock<std::mutex>& lock);
  // Polls (unlocked) for a push or a close for up to policy_.spin, unless another worker is
  // already polling.
  void spin_for_sentences(std::unique_lock<std::mutex>& lock);

  BatchPolicy policy_;
  std::function<void()> on_rest_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<QueuedSentence> queue_;
  Clock::time_point last_arrival_;
  Clock::time_point last_activity_ = Clock::now();  // the last arrival or finished batch
  bool rested_ = true;                               // on_rest has run since last_activity_
  int decoding_ = 0;  // batches popped and not yet done
  bool closed_ = false;
  std::atomic<uint64_t> events_{0};  // pushes and closes, for a polling worker to see
  bool spinning_ = false;            // a worker is in spin_for_sentences
  uint64_t spin_hits_ = 0;
};

}  // namespace heed::serve
