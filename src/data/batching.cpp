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

// Step 5 of plan_epoch (batching.hpp).
void balance_groups(const ParallelCorpus& corpus, std::vector<std::vector<size_t>>& batches, int64_t epoch,
                    const BatchGrouping& grouping, std::mt19937_64& rng) {
  const size_t n = batches.size(), g = static_cast<size_t>(grouping.size);
  // This epoch begins at the run's batch epoch × n, `into` a group; its first `lead` batches end it.
  const size_t into = (static_cast<size_t>(epoch) % g * (n % g) + g - static_cast<size_t>(grouping.origin) % g) % g;
  const size_t lead = (g - into) % g;
  if (lead >= n) return;
  const size_t groups = (n - lead) / g;
  if (groups < 2) return;
  const auto first = batches.begin() + static_cast<ptrdiff_t>(lead);
  const auto last = first + static_cast<ptrdiff_t>(groups * g);
  const auto cost = [&](const std::vector<size_t>& batch) {
    size_t src = 0, tgt = 0;
    for (size_t i : batch) {
      src = std::max(src, corpus.source(i).size() + 1);
      tgt = std::max(tgt, corpus.target(i).size() + 1);
    }
    return batch.size() * (src + tgt);
  };
  std::vector<std::pair<size_t, std::vector<size_t>>> by_cost;
  by_cost.reserve(groups * g);
  for (auto it = first; it != last; ++it) by_cost.emplace_back(cost(*it), std::move(*it));
  std::stable_sort(by_cost.begin(), by_cost.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<size_t> group_order(groups);
  std::iota(group_order.begin(), group_order.end(), size_t{0});
  shuffle_in_place(group_order, rng);
  auto out = first;
  for (size_t k : group_order)
    for (size_t j = 0; j < g; ++j) *out++ = std::move(by_cost[k * g + j].second);
}

std::vector<size_t> all_indices(const ParallelCorpus& corpus) {
  std::vector<size_t> order(corpus.size());
  std::iota(order.begin(), order.end(), size_t{0});
  return order;
}

}  // namespace

std::vector<std::vector<size_t>> plan_epoch(const ParallelCorpus& corpus, int64_t batch_tokens, uint64_t seed,
                                            int64_t epoch, BatchUnit unit, BatchGrouping grouping) {
  std::mt19937_64 rng(seed + uint64_t(epoch));
  std::vector<size_t> order = all_indices(corpus);
  shuffle_in_place(order, rng);
  sort_by_length(corpus, order);
  auto batches = cut(corpus, order, batch_tokens, unit);
  shuffle_in_place(batches, rng);
  if (grouping.balanced && grouping.size > 1) balance_groups(corpus, batches, epoch, grouping, rng);
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

BatchIterator::BatchIterator(const ParallelCorpus& corpus, int64_t batch_tokens, uint64_t seed, BatchUnit unit,
                             BatchGrouping grouping)
    : corpus_(corpus), batch_tokens_(batch_tokens), seed_(seed), unit_(unit), grouping_(grouping) {
  if (corpus.size() == 0) throw Error("the training corpus is empty (every pair was skipped?)");
  if (batch_tokens < 1) throw Error("batch_tokens must be at least 1, got " + std::to_string(batch_tokens));
  if (grouping.size < 1) throw Error("a group of batches per update must hold at least 1");
  grouping_.origin = 0;
  plan(0);
  batches_per_epoch_ = plan_.size();
}

void BatchIterator::plan(int64_t epoch) {
  plan_ = plan_epoch(corpus_, batch_tokens_, seed_, epoch, unit_, grouping_);
  planned_epoch_ = epoch;
}

void BatchIterator::seek(int64_t epoch, size_t batch_index) {
  if (epoch < 0) throw Error("cannot position the batches at epoch " + std::to_string(epoch));
  if (batch_index >= batches_per_epoch_)
    throw Error("cannot resume at batch " + std::to_string(batch_index) + " of epoch " + std::to_string(epoch) +
                ": an epoch has " + std::to_string(batches_per_epoch_) + " batches (different data or batch_tokens?)");
  const auto g = static_cast<uint64_t>(grouping_.size);
  const auto origin =
      static_cast<int64_t>((static_cast<uint64_t>(epoch) % g * (batches_per_epoch_ % g) + batch_index) % g);
  if (epoch != planned_epoch_ || origin != grouping_.origin) {
    grouping_.origin = origin;
    plan(epoch);
  }
  epoch_ = epoch;
  batch_index_ = batch_index;
}

Batch BatchIterator::next() {
  Batch batch = make_corpus_batch(corpus_, plan_[batch_index_]);
  if (++batch_index_ == plan_.size()) {
    plan(epoch_ + 1);
    ++epoch_;
    batch_index_ = 0;
  }
  return batch;
}

}  // namespace heed
