#include "data/batching.hpp"

#include <algorithm>
#include <numeric>
#include <random>

#include "data/shuffle.hpp"
#include "util/error.hpp"

namespace heed {

namespace {

void sort_by_length(const ParallelCorpus& corpus, std::vector<size_t>& order) {
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const size_t ta = corpus.target(a).size(), tb = corpus.target(b).size();
    return ta != tb ? ta < tb : corpus.source(a).size() < corpus.source(b).size();
  });
}

// Greedy cut of `order` into batches within the token budget, counted in `unit`s.
std::vector<std::vector<size_t>> cut(const ParallelCorpus& corpus, const std::vector<size_t>& order,
                                     int64_t batch_tokens, BatchUnit unit) {
  std::vector<std::vector<size_t>> batches;
  std::vector<size_t> current;
  int64_t max_src = 0, max_tgt = 0, labels = 0;
  for (size_t i : order) {
    const int64_t src = int64_t(corpus.source(i).size()) + 1, tgt = int64_t(corpus.target(i).size()) + 1;
    const int64_t size =
        unit == BatchUnit::target ? labels + tgt : int64_t(current.size() + 1) * std::max({max_src, max_tgt, src, tgt});
    if (!current.empty() && size > batch_tokens) {
      batches.push_back(std::move(current));
      current = {};
      max_src = max_tgt = labels = 0;
    }
    current.push_back(i);
    max_src = std::max(max_src, src);
    max_tgt = std::max(max_tgt, tgt);
    labels += tgt;
  }
  if (!current.empty()) batches.push_back(std::move(current));
  return batches;
}

std::vector<size_t> all_indices(const ParallelCorpus& corpus) {
  std::vector<size_t> order(corpus.size());
  std::iota(order.begin(), order.end(), size_t{0});
  return order;
}

}  // namespace

std::vector<std::vector<size_t>> plan_epoch(const ParallelCorpus& corpus, int64_t batch_tokens, uint64_t seed,
                                            int64_t epoch, BatchUnit unit) {
  std::mt19937_64 rng(seed + uint64_t(epoch));
  std::vector<size_t> order = all_indices(corpus);
  shuffle_in_place(order, rng);
  sort_by_length(corpus, order);
  auto batches = cut(corpus, order, batch_tokens, unit);
  shuffle_in_place(batches, rng);
  return batches;
}

std::vector<std::vector<size_t>> plan_evaluation(const ParallelCorpus& corpus, int64_t batch_tokens) {
  std::vector<size_t> order = all_indices(corpus);
  sort_by_length(corpus, order);
  return cut(corpus, order, batch_tokens, BatchUnit::padded);
}

Batch make_corpus_batch(const ParallelCorpus& corpus, const std::vector<size_t>& indices) {
  std::vector<std::vector<int32_t>> sources, targets;
  sources.reserve(indices.size());
  targets.reserve(indices.size());
  for (size_t i : indices) {
    sources.emplace_back(corpus.source(i).begin(), corpus.source(i).end());
    targets.emplace_back(corpus.target(i).begin(), corpus.target(i).end());
  }
  Batch batch = make_batch(sources, targets);
  batch.indices = indices;
  return batch;
}

BatchIterator::BatchIterator(const ParallelCorpus& corpus, int64_t batch_tokens, uint64_t seed, BatchUnit unit)
    : corpus_(corpus), batch_tokens_(batch_tokens), seed_(seed), unit_(unit) {
  if (corpus.size() == 0) throw Error("the training corpus is empty (every pair was skipped?)");
  if (batch_tokens < 1) throw Error("batch_tokens must be at least 1, got " + std::to_string(batch_tokens));
  seek(0, 0);
  batches_per_epoch_ = plan_.size();
}

void BatchIterator::seek(int64_t epoch, size_t batch_index) {
  if (epoch < 0) throw Error("cannot position the batches at epoch " + std::to_string(epoch));
  if (epoch != planned_epoch_) {
    plan_ = plan_epoch(corpus_, batch_tokens_, seed_, epoch, unit_);
    planned_epoch_ = epoch;
  }
  if (batch_index >= plan_.size())
    throw Error("cannot resume at batch " + std::to_string(batch_index) + " of epoch " + std::to_string(epoch) +
                ": an epoch has " + std::to_string(plan_.size()) + " batches (different data or batch_tokens?)");
  epoch_ = epoch;
  batch_index_ = batch_index;
}

Batch BatchIterator::next() {
  Batch batch = make_corpus_batch(corpus_, plan_[batch_index_]);
  if (batch_index_ + 1 < plan_.size()) {
    ++batch_index_;
  } else {
    seek(epoch_ + 1, 0);
  }
  return batch;
}

}  // namespace heed
