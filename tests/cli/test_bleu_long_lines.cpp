// heed bleu on one very long line pair: TER's edit distance keeps only its beam (sacreBLEU's
// bound on the cells it computes), so 20,000 words take MBs and seconds, not the 6.4 GB of a
// full table.
#include <catch2/catch.hpp>

#include <chrono>
#include <random>

#include "resource_bounds.hpp"
#include "train_fixture.hpp"

using namespace heed::test;

TEST_CASE("bleu -m bleu chrf ter on a 20,000-word line runs in bounded memory and time", "[cli][bleu]") {
  TempDir dir("bleu-long");
  std::mt19937 rng(7);
  std::ofstream hyp(dir / "hyp.txt"), ref(dir / "ref.txt");
  for (int i = 0; i < 20000; ++i) {
    const uint32_t word = rng() % 50;
    ref << (i ? " " : "") << "w" << word;
    hyp << (i ? " " : "") << "w" << (rng() % 4 ? word : rng() % 50);  // a quarter of the words differ
  }
  ref << '\n';
  hyp << '\n';
  ref.close();
  hyp.close();
  const auto start = std::chrono::steady_clock::now();
  Result r =
      run(memory_bound(2000) + kHeed + " bleu -m bleu chrf ter -b " + (dir / "ref.txt") + " -i " + (dir / "hyp.txt"),
          dir / "run");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::istringstream scores(r.out);
  double bleu = -1, chrf = -1, ter = -1;
  scores >> bleu >> chrf >> ter;
  CHECK(bleu > 20);
  CHECK(bleu < 80);
  CHECK(chrf > 50);
  CHECK(ter > 5);  // about a quarter of the words are substituted (some by themselves)
  CHECK(ter < 30);
  CHECK(seconds < time_bound(30));
}
