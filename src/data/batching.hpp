#pragma once
// Training batches by a token budget, in an order that is a pure function of (seed, epoch,
// corpus), so a run resumed at (epoch, batch index) sees exactly the batches it would have seen.
//
// One epoch (e = 0, 1, ...), with rng = std::mt19937_64(seed + e):
//   1. shuffle the pair indices (Fisher–Yates, shuffle.hpp): the tie-break of step 2;
//   2. stable-sort them by (target length, source length), lengths including </s>;
//   3. cut that sequence greedily into batches: a pair joins the current batch while the batch
//      stays within batch_tokens, counted in `BatchUnit`s (a pair alone over the budget is a batch);
//   4. shuffle the batches (Fisher–Yates, same rng).
// Sorting keeps padding small; the lengths sequence after step 2 does not depend on the
// tie-break, so every epoch has the same number of batches, but their members vary.
#include <cstdint>
#include <string_view>
#include <vector>

#include "config/config.hpp"  // BatchUnit
#include "data/parallel_corpus.hpp"
#include "tokens/batch.hpp"

namespace heed {

// The corpus indices of each batch of `epoch`, in training order.
std::vector<std::vector<size_t>> plan_epoch(const ParallelCorpus& corpus, int64_t batch_tokens, uint64_t seed,
                                            int64_t epoch, BatchUnit unit = BatchUnit::padded);

// Evaluation (e.g. dev loss): the same length sort and cut, no randomness; ties keep corpus order.
std::vector<std::vector<size_t>> plan_evaluation(const ParallelCorpus& corpus, int64_t batch_tokens);

// The padded batch of the given corpus pairs (indices = those corpus indices).
Batch make_corpus_batch(const ParallelCorpus& corpus, const std::vector<size_t>& indices);

class BatchIterator {
 public:
  // Throws heed::Error for an empty corpus or batch_tokens < 1.
  BatchIterator(const ParallelCorpus& corpus, int64_t batch_tokens, uint64_t seed, BatchUnit unit = BatchUnit::padded);

  // Position so that next() returns batch `batch_index` of `epoch` (0-based both).
  void seek(int64_t epoch, size_t batch_index);
  // The batch at the current position; then moves on (to batch 0 of the next epoch after the last).
  Batch next();

  int64_t epoch() const { return epoch_; }             // of the batch next() returns
  size_t batch_index() const { return batch_index_; }  // of the batch next() returns
  size_t batches_per_epoch() const { return batches_per_epoch_; }

 private:
  const ParallelCorpus& corpus_;
  int64_t batch_tokens_;
  uint64_t seed_;
  BatchUnit unit_;
  int64_t epoch_ = 0;
  size_t batch_index_ = 0;
  size_t batches_per_epoch_ = 0;
  int64_t planned_epoch_ = -1;  // epoch whose plan_ is held
  std::vector<std::vector<size_t>> plan_;
};

}  // namespace heed
