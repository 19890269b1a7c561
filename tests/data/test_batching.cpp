#include <algorithm>
#include <catch2/catch.hpp>
#include <set>

#include "data/batching.hpp"
#include "data/shuffle.hpp"
#include "util/error.hpp"

using namespace heed;

namespace {

// n pairs, source lengths drawn from [1, max_len] (seeded, our own draw), target lengths within
// 3 of them as in real text; source ids 100 + i, target ids 200 + i repeated, so every pair is
// recognisable.
ParallelCorpus random_corpus(size_t n, int max_len, uint64_t seed = 7) {
  std::mt19937_64 rng(seed);
  ParallelCorpus c;
  for (size_t i = 0; i < n; ++i) {
    const int ls = 1 + int(uniform_below(rng, max_len));
    const int lt = std::max(1, ls - 3 + int(uniform_below(rng, 7)));
    c.add(std::vector<int>(ls, 100 + int(i % 1000)), std::vector<int>(lt, 200 + int(i % 1000)));
  }
  return c;
}

int64_t padded_tokens(const ParallelCorpus& c, const std::vector<size_t>& batch) {
  int64_t s = 0, t = 0;
  for (size_t i : batch) {
    s = std::max<int64_t>(s, c.source(i).size() + 1);
    t = std::max<int64_t>(t, c.target(i).size() + 1);
  }
  return int64_t(batch.size()) * std::max(s, t);
}

}  // namespace

TEST_CASE("make_batch pads exactly like the PyTorch reference batch") {
  // The batch of the golden files (tests/fixtures/golden/README.md): 3 pairs.
  const Batch b = make_batch({{8, 22, 6, 12, 7}, {10, 7, 19}, {11, 22, 7, 14, 4, 4, 4}},
                             {{19, 18, 19, 16}, {4, 16, 17, 4, 18, 12}, {21, 4}});
  CHECK(b.size == 3);
  CHECK(b.src_len == 8);
  CHECK(b.tgt_len == 7);
  CHECK(b.src == std::vector<int32_t>{8,  22, 6,  12, 7, 3, 0, 0,  //
                                      10, 7,  19, 3,  0, 0, 0, 0,  //
                                      11, 22, 7,  14, 4, 4, 4, 3});
  CHECK(b.tgt_in == std::vector<int32_t>{2, 19, 18, 19, 16, 0,  0,   //
                                         2, 4,  16, 17, 4,  18, 12,  //
                                         2, 21, 4,  0,  0,  0,  0});
  CHECK(b.tgt_out == std::vector<int32_t>{19, 18, 19, 16, 3,  0,  0,  //
                                          4,  16, 17, 4,  18, 12, 3,  //
                                          21, 4,  3,  0,  0,  0,  0});
  CHECK(b.src_lengths == std::vector<int32_t>{6, 4, 8});
  CHECK(b.tgt_lengths == std::vector<int32_t>{5, 7, 3});
  CHECK(b.num_labels() == 15);
  CHECK(b.indices == std::vector<size_t>{0, 1, 2});

  const Batch source_only = make_batch({{5}, {}}, {});
  CHECK(source_only.src == std::vector<int32_t>{5, 3, 3, 0});
  CHECK(source_only.tgt_len == 0);
  CHECK(source_only.tgt_in.empty());
  CHECK(source_only.num_labels() == 0);
  CHECK_THROWS_AS(make_batch({{5}, {6}}, {{7}}), Error);
}

TEST_CASE("the shuffle is a fixed function of the seed on every standard library") {
  // mt19937_64's sequence is fixed by the C++ standard; our draw and Fisher–Yates are ours.
  // Expected values computed by an independent Python MT19937-64 of the reference algorithm.
  std::mt19937_64 rng(42);
  std::vector<int> v{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  shuffle_in_place(v, rng);
  CHECK(v == std::vector<int>{1, 7, 9, 0, 3, 8, 4, 2, 5, 6});
  std::mt19937_64 again(42);
  std::vector<int> w{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  shuffle_in_place(w, again);
  CHECK(w == v);
  std::mt19937_64 draws(1);
  for (int i = 0; i < 1000; ++i) CHECK(uniform_below(draws, 3) < 3);
}

TEST_CASE("batches respect the token budget and use every pair exactly once per epoch") {
  const ParallelCorpus c = random_corpus(3000, 40);
  for (int64_t budget : {200, 1000, 4000}) {
    INFO("budget " << budget);
    for (int64_t epoch : {0, 1}) {
      const auto plan = plan_epoch(c, budget, 5, epoch);
      std::vector<int> used(c.size(), 0);
      int64_t real = 0, padded = 0;
      for (const auto& batch : plan) {
        REQUIRE(!batch.empty());
        CHECK(padded_tokens(c, batch) <= budget);
        for (size_t i : batch) {
          ++used[i];
          real += std::max(c.source(i).size(), c.target(i).size()) + 1;
        }
        padded += padded_tokens(c, batch);
      }
      CHECK(std::all_of(used.begin(), used.end(), [](int n) { return n == 1; }));
      // sorting by length keeps padding small (random lengths 1-40 unsorted would waste ~40%)
      CHECK(double(real) / double(padded) > 0.85);
    }
  }
}

TEST_CASE("batch unit target: the budget counts target labels incl. </s>, as the PyTorch reference") {
  ParallelCorpus c;
  c.add(std::vector<int>(20, 1), {1});  // 0: labels 2 (its source would pad the batch to 21)
  c.add({1}, {1, 1});                   // 1: labels 3
  c.add({1}, {1, 1, 1});                // 2: labels 4
  c.add({1}, {1, 1, 1, 1});             // 3: labels 5
  c.add({1}, std::vector<int>(11, 1));  // 4: labels 12, over the budget alone
  // sorted by target length: 0 1 2 3 4; budget 9: 2+3+4 = 9 fits, +5 does not; 5 | 12
  const auto plan = plan_epoch(c, 9, 3, 0, BatchUnit::target);
  std::set<std::vector<size_t>> batches(plan.begin(), plan.end());
  CHECK(batches == std::set<std::vector<size_t>>{{0, 1, 2}, {3}, {4}});
  // the padded unit counts 3 * 21 = 63 positions for the first of those batches
  const auto padded = plan_epoch(c, 9, 3, 0, BatchUnit::padded);
  CHECK(std::set<std::vector<size_t>>(padded.begin(), padded.end()) ==
        std::set<std::vector<size_t>>{{0}, {1, 2}, {3}, {4}});

  const ParallelCorpus big = random_corpus(3000, 40);
  const auto target_plan = plan_epoch(big, 2000, 5, 0, BatchUnit::target);
  for (size_t b = 0; b < target_plan.size(); ++b) {
    int64_t labels = 0;
    for (size_t i : target_plan[b]) labels += int64_t(big.target(i).size()) + 1;
    CHECK(labels <= 2000);
  }
  BatchIterator it(big, 2000, 5, BatchUnit::target);
  CHECK(it.batches_per_epoch() == target_plan.size());
  CHECK(it.next().indices == target_plan.front());
}

TEST_CASE("evaluation batches: sorted by length, in a fixed order, every pair once") {
  ParallelCorpus c;
  c.add({1, 1, 1}, {1, 1, 1});  // 0: lengths 4, 4
  c.add({1}, {1});              // 1: 2, 2
  c.add({1, 1}, {1});           // 2: 3, 2
  c.add({1}, {1});              // 3: 2, 2
  c.add({1, 1, 1}, {1, 1});     // 4: 4, 3
  // sorted: 1 3 2 | 4 | 0 with a budget of 8 padded tokens (3 pairs * 3 = 9 > 8)
  CHECK(plan_evaluation(c, 8) == std::vector<std::vector<size_t>>{{1, 3}, {2, 4}, {0}});
  CHECK(plan_evaluation(c, 100) == std::vector<std::vector<size_t>>{{1, 3, 2, 4, 0}});
}

TEST_CASE("a pair longer than the budget is a batch of its own") {
  ParallelCorpus c;
  c.add({1, 2}, {3});
  c.add(std::vector<int>(30, 9), {4});
  c.add({5}, {6, 7});
  const auto plan = plan_epoch(c, 10, 1, 0);
  std::set<std::vector<size_t>> batches(plan.begin(), plan.end());
  CHECK(batches.count({1}) == 1);
  size_t total = 0;
  for (const auto& b : plan) total += b.size();
  CHECK(total == 3);
}

TEST_CASE("the order is a pure function of seed and epoch, different every epoch") {
  const ParallelCorpus c = random_corpus(2000, 30);
  const auto e0 = plan_epoch(c, 600, 11, 0);
  CHECK(plan_epoch(c, 600, 11, 0) == e0);
  const auto e1 = plan_epoch(c, 600, 11, 1);
  CHECK(e1 != e0);
  CHECK(e1.size() == e0.size());  // same length profile, same number of batches
  CHECK(plan_epoch(c, 600, 12, 0) != e0);
  // epoch e of seed s is epoch 0 of seed s + e
  CHECK(plan_epoch(c, 600, 10, 1) == e0);
}

TEST_CASE("the iterator walks epochs and resumes at any (epoch, batch)") {
  const ParallelCorpus c = random_corpus(500, 20);
  BatchIterator it(c, 300, 3);
  const size_t per_epoch = it.batches_per_epoch();
  REQUIRE(per_epoch > 5);
  CHECK(per_epoch == plan_epoch(c, 300, 3, 0).size());

  std::vector<std::vector<size_t>> seen;
  for (size_t k = 0; k < per_epoch + 4; ++k) {
    CHECK(it.epoch() == int64_t(k / per_epoch));
    CHECK(it.batch_index() == k % per_epoch);
    const Batch b = it.next();
    CHECK(b.size == int(b.indices.size()));
    CHECK(int64_t(b.size) * std::max(b.src_len, b.tgt_len) <= 300);
    seen.push_back(b.indices);
  }
  CHECK(it.epoch() == 1);
  CHECK(it.batch_index() == 4);
  const auto epoch1 = plan_epoch(c, 300, 3, 1);
  CHECK(seen[per_epoch + 2] == epoch1[2]);

  // a fresh iterator positioned where the first one was gives the same batches
  BatchIterator resumed(c, 300, 3);
  resumed.seek(1, 2);
  CHECK(resumed.next().indices == seen[per_epoch + 2]);
  CHECK(resumed.next().indices == seen[per_epoch + 3]);
  resumed.seek(0, per_epoch - 1);
  CHECK(resumed.next().indices == seen[per_epoch - 1]);
  CHECK(resumed.epoch() == 1);
  CHECK(resumed.batch_index() == 0);

  // the batch content is the corpus pairs
  resumed.seek(0, 0);
  const Batch b = resumed.next();
  const size_t first = b.indices[0];
  CHECK(b.src_lengths[0] == int32_t(c.source(first).size()) + 1);
  CHECK(b.src[0] == c.source(first)[0]);
  CHECK(b.tgt_out[c.target(first).size()] == 3);

  CHECK_THROWS_WITH(resumed.seek(0, per_epoch), Catch::Contains("an epoch has " + std::to_string(per_epoch)));
  CHECK_THROWS_AS(BatchIterator(ParallelCorpus{}, 100, 1), Error);
  CHECK_THROWS_AS(BatchIterator(c, 0, 1), Error);
}
