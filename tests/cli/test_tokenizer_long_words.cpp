// heed tokenizer train on text without spaces, which is one long word: a merge visits only the
// places of its pair, so 200 kB take a fraction of a second (rescanning the word for every merge
// took 8.5 s here, 47 s for 1 MB), and the tokenizer still gives the text back exactly.
#include <catch2/catch.hpp>

#include <chrono>
#include <random>

#include "resource_bounds.hpp"
#include "train_fixture.hpp"

using namespace heed::test;

TEST_CASE("tokenizer train on 200 kB without a space is fast and round-trips the text", "[cli][tokenizer]") {
  TempDir dir("tokenizer-long-word");
  std::mt19937 rng(5);  // raw outputs only: the same text with every standard library
  std::string text;
  for (int i = 0; i < 200000; ++i) text += static_cast<char>('a' + rng() % 26);
  text += '\n';
  std::ofstream(dir / "text.txt", std::ios::binary) << text;

  const auto start = std::chrono::steady_clock::now();
  Result r =
      run(kHeed + " --threads 1 tokenizer train --vocab-size 8000 -o " + (dir / "tok.json") + " " + (dir / "text.txt"),
          dir / "train");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("tokenizer: 7713 merges, vocabulary 8000"));
  CHECK(seconds < time_bound(3));

  r = run(kHeed + " --threads 1 tokenizer encode --ids -m " + (dir / "tok.json") + " -i " + (dir / "text.txt") +
              " -o " + (dir / "ids.txt"),
          dir / "encode");
  REQUIRE(r.exit_code == 0);
  std::istringstream ids(slurp(dir / "ids.txt"));
  size_t tokens = 0;
  for (std::string id; ids >> id;) ++tokens;
  CHECK(tokens < 100000);  // the merges apply: about 2.3 letters a token
  r = run(kHeed + " --threads 1 tokenizer decode --ids -m " + (dir / "tok.json") + " -i " + (dir / "ids.txt") + " -o " +
              (dir / "back.txt"),
          dir / "decode");
  REQUIRE(r.exit_code == 0);
  CHECK(slurp(dir / "back.txt") == text);
}
