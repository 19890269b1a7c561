#include "serve/batch_queue.hpp"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "serve/spin_wait.hpp"

namespace heed::serve {

Selection select_batch(const std::deque<QueuedSentence>& queue, int max_batch_tokens) {
  Selection s;
  if (queue.empty()) return s;
  const SearchKey key = queue.front().job->key;
  std::vector<size_t> same;  // the oldest's kind, shortest first (arrival order among equals)
  for (size_t i = 0; i < queue.size(); ++i)
    if (queue[i].job->key == key) same.push_back(i);
  std::stable_sort(same.begin(), same.end(), [&](size_t a, size_t b) { return queue[a].tokens < queue[b].tokens; });
  auto tokens = [&](size_t j) { return static_cast<long>(queue[same[j]].tokens); };
  const size_t oldest = std::find(same.begin(), same.end(), size_t{0}) - same.begin();
  const long anchor = tokens(oldest);
  // Grow the window [lo, hi] of `same` around the oldest: a shorter neighbour keeps the padded
  // length, a longer one raises it to its own; take the one nearer in length while it fits.
  size_t lo = oldest, hi = oldest;
  for (long count = 1;; ++count) {
    const bool down = lo > 0 && (count + 1) * tokens(hi) <= max_batch_tokens;
    const bool up = hi + 1 < same.size() && (count + 1) * tokens(hi + 1) <= max_batch_tokens;
    if (!down && !up) break;
    if (down && (!up || anchor - tokens(lo - 1) <= tokens(hi + 1) - anchor))
      --lo;
    else
      ++hi;
  }
  for (size_t j = hi + 1; j-- > lo;) s.members.push_back(same[j]);
  s.full = s.members.size() < same.size();
  return s;
}

BatchQueue::BatchQueue(const BatchPolicy& policy, std::function<void()> on_rest)
    : policy_(policy), on_rest_(std::move(on_rest)) {
  policy_.lull = std::min(policy_.lull, policy_.max_wait);
}

bool BatchQueue::push(const std::shared_ptr<Job>& job) {
  const auto now = Clock::now();
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) return false;
    for (size_t i = 0; i < job->sources.size(); ++i)
      if (!job->sources[i].empty()) queue_.push_back({job, i, static_cast<int>(job->sources[i].size()) + 1, now});
    last_arrival_ = last_activity_ = now;
    rested_ = false;
    ++events_;
  }
  changed_.notify_all();
  return true;
}

std::vector<QueuedSentence> BatchQueue::pop_batch() {
  std::unique_lock<std::mutex> lock(mutex_);
  bool spun = false;
  for (;;) {
    if (queue_.empty()) {
      if (closed_) return {};
      if (!spun) {
        spun = true;
        // Looked at again under the lock: a push between the poll's last look and the lock
        // would otherwise wake nobody (its notify came before this worker waited).
        spin_for_sentences(lock);
        continue;
      }
      wait_for_sentences(lock);
      continue;
    }
    const Selection s = select_batch(queue_, policy_.max_batch_tokens);
    const auto due = std::min(queue_.front().arrival + policy_.max_wait, last_arrival_ + policy_.lull);
    if (!closed_ && !s.full && (decoding_ > 0 || policy_.wait_when_idle) && Clock::now() < due) {
      changed_.wait_until(lock, due);
      continue;
    }
    std::vector<QueuedSentence> batch;
    std::vector<char> taken(queue_.size(), 0);
    for (size_t i : s.members) {
      batch.push_back(queue_[i]);
      taken[i] = 1;
    }
    std::deque<QueuedSentence> rest;  // copies: out of memory here leaves the queue as it was
    for (size_t i = 0; i < queue_.size(); ++i)
      if (!taken[i]) rest.push_back(queue_[i]);
    queue_.swap(rest);
    ++decoding_;
    if (!queue_.empty()) changed_.notify_one();  // another idle worker may take what is left
    return batch;
  }
}

void BatchQueue::spin_for_sentences(std::unique_lock<std::mutex>& lock) {
  if (spinning_ || policy_.spin.count() <= 0) return;
  spinning_ = true;
  const uint64_t seen = events_.load();
  lock.unlock();
  const bool changed = spin_until([&] { return events_.load() != seen; }, policy_.spin);
  lock.lock();
  spinning_ = false;
  if (changed && !queue_.empty()) ++spin_hits_;
}

void BatchQueue::wait_for_sentences(std::unique_lock<std::mutex>& lock) {
  if (!on_rest_ || rested_ || decoding_ > 0) {
    changed_.wait(lock);
    return;
  }
  const auto at_rest = last_activity_ + policy_.rest;
  if (Clock::now() < at_rest) {
    changed_.wait_until(lock, at_rest);
    return;  // the caller looks again: a sentence may have come, or the rest begun
  }
  rested_ = true;
  lock.unlock();
  on_rest_();
  lock.lock();
}

void BatchQueue::batch_done() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    --decoding_;
    last_activity_ = Clock::now();
    rested_ = false;
  }
  changed_.notify_all();  // a waiting batch may be due now that the server is idle
}

size_t BatchQueue::remove(const Job* job) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const size_t before = queue_.size();
  std::erase_if(queue_, [&](const QueuedSentence& q) { return q.job.get() == job; });
  return before - queue_.size();
}

void BatchQueue::close() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    ++events_;
  }
  changed_.notify_all();
}

uint64_t BatchQueue::spin_hits() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return spin_hits_;
}

bool BatchQueue::polling() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return spinning_;
}

size_t BatchQueue::size() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return queue_.size();
}

}  // namespace heed::serve
