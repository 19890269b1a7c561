#include <catch2/catch.hpp>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include "../temp_dir.hpp"

#include "data/corpus_cache.hpp"
#include "data/parallel_corpus.hpp"
#include "util/error.hpp"

using namespace heed;
using namespace std::string_literals;
namespace fs = std::filesystem;

namespace {

struct TempDir : test::TempDir {
  TempDir() : test::TempDir("test-corpus") {}
  std::string file(const std::string& name, const std::string& content) const {
    std::ofstream(*this / name, std::ios::binary) << content;
    return *this / name;
  }
};

// Every word below is one token, so lengths in tests are word counts (+1 for </s>).
Tokenizer word_tokenizer(int extra_vocab = 0) {
  std::unordered_map<std::string, int64_t> counts;
  for (const char* w : {"one",  "two",  "three", "four", "five", "six",   "seven",  "eight", "nine", "ten",
                        "eins", "zwei", "drei",  "vier", "fünf", "sechs", "sieben", "acht",  "neun", "zehn"})
    counts[std::string(" ") + w] = 10;
  TokenizerOptions options;
  options.vocab_size = 2000 + extra_vocab;
  options.character_coverage = 1.0;
  Tokenizer t = Tokenizer::train_from_word_counts(counts, options);
  REQUIRE(t.encode("one two fünf zehn").size() == 4);
  return t;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::vector<int32_t> ids(std::span<const int32_t> s) { return {s.begin(), s.end()}; }
std::vector<int32_t> ids(const std::vector<int>& v) { return {v.begin(), v.end()}; }

}  // namespace

TEST_CASE("files of different length: an error naming both files and counts, before any tokenizing") {
  TempDir dir;
  // line 1 of the source is invalid UTF-8: reading it first would give another error
  const auto src = dir.file("a.en", "\xff one\ntwo\nthree\n");
  const auto tgt = dir.file("a.de", "eins\nzwei\n");
  const auto tok = Tokenizers::joint(word_tokenizer());
  const std::string e = error_of([&] { load_parallel_corpus({src}, {tgt}, tok, {}, ""); });
  CHECK_THAT(e, Catch::Contains(src + " has 3 lines") && Catch::Contains(tgt + " has 2"));

  // the second corpus of a list is checked too, before the first is tokenized
  const auto src2 = dir.file("b.en", "one\n");
  const auto tgt2 = dir.file("b.de", "eins\nzwei");  // a last line without '\n' counts
  const auto ok_src = dir.file("ok.en", "\xff\n");
  const auto ok_tgt = dir.file("ok.de", "eins\n");
  const std::string e2 = error_of([&] { load_parallel_corpus({ok_src, src2}, {ok_tgt, tgt2}, tok, {}, ""); });
  CHECK_THAT(e2, Catch::Contains(src2 + " has 1 lines") && Catch::Contains(tgt2 + " has 2"));

  CHECK_THAT(error_of([&] {
               load_parallel_corpus({src, src2}, {tgt}, tok, {}, "");
             }),
             Catch::Contains("2 source files but 1 target files"));
  CHECK_THAT(error_of([&] {
               load_parallel_corpus({dir.file("c.en", "x\n")}, {(dir.path / "missing.de").string()}, tok, {}, "");
             }),
             Catch::Contains("missing.de"));
}

TEST_CASE("invalid UTF-8 is an error naming file and line") {
  TempDir dir;
  const auto src = dir.file("a.en", "one\ntwo\n");
  const auto tgt = dir.file("a.de", "eins\nzw\xc3\x28i\n");
  const auto tok = Tokenizers::joint(word_tokenizer());
  CHECK_THAT(error_of([&] { load_parallel_corpus({src}, {tgt}, tok, {}, ""); }),
             Catch::Contains(tgt + ":2") && Catch::Contains("UTF-8"));
}

TEST_CASE("a NUL byte is an error naming file and line, also before the line counts are compared") {
  TempDir dir;
  const auto tok = Tokenizers::joint(word_tokenizer());
  const auto src = dir.file("a.en", "one\ntwo\n");
  const auto tgt = dir.file("a.de", "eins\nzw\0ei\n"s);
  CHECK(error_of([&] { load_parallel_corpus({src}, {tgt}, tok, {}, ""); }) ==
        tgt + ":2: a NUL byte at byte 3 (is the file UTF-16? heed reads UTF-8)");
  // The same text in UTF-16LE counts one line more (the NUL after the last '\n'): its NULs are
  // named, not a length mismatch.
  const auto utf16 = dir.file("b.de", "e\0i\0n\0s\0\n\0z\0w\0e\0i\0\n\0"s);
  CHECK(error_of([&] { load_parallel_corpus({src}, {utf16}, tok, {}, ""); }) ==
        utf16 + ":1: a NUL byte at byte 2 (is the file UTF-16? heed reads UTF-8)");
}

TEST_CASE("empty, too long and badly proportioned pairs are skipped and counted") {
  TempDir dir;
  const auto src = dir.file("a.en",
                            "  one two  \n"              // kept (trimmed)
                            "\n"                         // empty source
                            "three\n"                    // target only whitespace
                            "one two three four five\n"  // 6 tokens with </s> > 5
                            "one\n"                      // 2 vs 5 tokens: ratio 2.5 > 2
                            "one two three four\r\n"     // 5 vs 5 tokens: kept; \r trimmed
                            "six\n");                    // kept
  const auto tgt = dir.file("a.de",
                            "eins zwei\n"
                            "eins\n"
                            " \t \n"
                            "eins\n"
                            "eins zwei drei vier\n"
                            "eins zwei drei vier\r\n"
                            "sechs\n");
  const Tokenizer t = word_tokenizer();
  const auto tok = Tokenizers::joint(t);
  CorpusFilter filter;
  filter.max_length = 5;
  filter.max_length_ratio = 2.0;
  const LoadedCorpus loaded = load_parallel_corpus({src}, {tgt}, tok, filter, "");
  CHECK(loaded.stats.pairs_read == 7);
  CHECK(loaded.stats.kept == 3);
  CHECK(loaded.stats.skipped_empty == 2);
  CHECK(loaded.stats.skipped_too_long == 1);
  CHECK(loaded.stats.skipped_ratio == 1);
  CHECK_FALSE(loaded.stats.from_cache);
  REQUIRE(loaded.corpus.size() == 3);
  CHECK(ids(loaded.corpus.source(0)) == ids(t.encode("one two")));
  CHECK(ids(loaded.corpus.target(0)) == ids(t.encode("eins zwei")));
  CHECK(ids(loaded.corpus.source(1)) == ids(t.encode("one two three four")));
  CHECK(ids(loaded.corpus.target(2)) == ids(t.encode("sechs")));

  // without limits only the empty pairs go
  const LoadedCorpus all = load_parallel_corpus({src}, {tgt}, tok, {0, 0}, "");
  CHECK(all.stats.kept == 5);
  CHECK(all.stats.skipped_empty == 2);

  // the first lines only (training.validation_lines): counted and filtered the same way
  const LoadedCorpus first = load_parallel_corpus({src}, {tgt}, tok, {5, 2.0, 4}, "");
  CHECK(first.stats.pairs_read == 4);
  CHECK(first.stats.kept == 1);
  CHECK(first.stats.skipped_empty == 2);
  CHECK(first.stats.skipped_too_long == 1);
  CHECK(first.corpus.tokens == load_parallel_corpus({src}, {tgt}, tok, {5, 2.0, 1}, "").corpus.tokens);
  CHECK(load_parallel_corpus({src}, {tgt}, tok, {5, 2.0, 100}, "").stats.pairs_read == 7);  // fewer lines: all
  CHECK(corpus_cache_key({src}, {tgt}, tok, {5, 2.0, 4}) != corpus_cache_key({src}, {tgt}, tok, {5, 2.0, 0}));
}

TEST_CASE("several corpora are concatenated in order, each side with its own tokenizer") {
  TempDir dir;
  const auto a_src = dir.file("a.en", "one\ntwo\n"), a_tgt = dir.file("a.de", "eins\nzwei\n");
  const auto b_src = dir.file("b.en", "three\n"), b_tgt = dir.file("b.de", "drei\n");
  const Tokenizer t = word_tokenizer();
  const Tokenizer bigger = word_tokenizer(1);  // same pieces; stands in for a second model
  const auto loaded = load_parallel_corpus({a_src, b_src}, {a_tgt, b_tgt}, Tokenizers::separate(t, bigger), {}, "");
  REQUIRE(loaded.corpus.size() == 3);
  CHECK(ids(loaded.corpus.source(2)) == ids(t.encode("three")));
  CHECK(ids(loaded.corpus.target(1)) == ids(bigger.encode("zwei")));
  CHECK(loaded.corpus.offsets.size() == 7);
}

TEST_CASE("the encoded corpus cache: hit, and miss when text, tokenizer or filter change") {
  TempDir dir;
  const std::string cache = (dir.path / "cache").string();
  const auto src = dir.file("a.en", "one two\nthree\nfour five six\n");
  const auto tgt = dir.file("a.de", "eins zwei\ndrei\nvier fünf sechs\n");
  const auto tok = Tokenizers::joint(word_tokenizer());
  const CorpusFilter filter;

  const LoadedCorpus first = load_parallel_corpus({src}, {tgt}, tok, filter, cache);
  CHECK_FALSE(first.stats.from_cache);
  const std::string path = corpus_cache_path(cache, corpus_cache_key({src}, {tgt}, tok, filter));
  REQUIRE(fs::exists(path));

  const LoadedCorpus second = load_parallel_corpus({src}, {tgt}, tok, filter, cache);
  CHECK(second.stats.from_cache);
  CHECK(second.corpus.tokens == first.corpus.tokens);
  CHECK(second.corpus.offsets == first.corpus.offsets);
  CHECK(second.stats.kept == 3);
  CHECK(second.stats.pairs_read == 3);

  SECTION("the text changes") {
    dir.file("a.en", "one two\nthree\nfour five\n");
    const LoadedCorpus changed = load_parallel_corpus({src}, {tgt}, tok, filter, cache);
    CHECK_FALSE(changed.stats.from_cache);
    CHECK(changed.corpus.source(2).size() == 2);
    CHECK(load_parallel_corpus({src}, {tgt}, tok, filter, cache).stats.from_cache);
  }
  SECTION("only the modification time changes") {
    fs::last_write_time(tgt, fs::last_write_time(tgt) + std::chrono::seconds(5));
    CHECK_FALSE(load_parallel_corpus({src}, {tgt}, tok, filter, cache).stats.from_cache);
  }
  SECTION("the tokenizer changes") {
    const auto other = Tokenizers::joint(word_tokenizer(1));
    CHECK_FALSE(load_parallel_corpus({src}, {tgt}, other, filter, cache).stats.from_cache);
    CHECK_FALSE(
        load_parallel_corpus({src}, {tgt}, Tokenizers::separate(word_tokenizer(), word_tokenizer()), filter, cache)
            .stats.from_cache);
  }
  SECTION("the filter changes") {
    CHECK_FALSE(load_parallel_corpus({src}, {tgt}, tok, {50, 0}, cache).stats.from_cache);
    CHECK_FALSE(load_parallel_corpus({src}, {tgt}, tok, {100, 1.5}, cache).stats.from_cache);
  }
  SECTION("a cache that cannot be written only costs time") {
    const std::string blocked = dir.file("not-a-dir", "x");  // a file where the directory should be
    const LoadedCorpus uncached = load_parallel_corpus({src}, {tgt}, tok, filter, blocked + "/cache");
    CHECK(uncached.corpus.tokens == first.corpus.tokens);
  }
  SECTION("a cache whose ids or lengths are damaged (its sizes intact) is rebuilt, not used") {
    // Checked by the ids' range and the pairs' lengths, and by the checksum of the bytes.
    // The last two bytes: the last target token. 0xFFFF is beyond the vocabulary; training
    // failed on it far from here, with an error that did not name the cache.
    for (const uint16_t damage : {uint16_t{0xFFFF}, uint16_t{0}}) {
      INFO(damage);
      {
        std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(-2, std::ios::end);
        f.write(reinterpret_cast<const char*>(&damage), 2);
      }
      const LoadedCorpus rebuilt = load_parallel_corpus({src}, {tgt}, tok, filter, cache);
      CHECK_FALSE(rebuilt.stats.from_cache);
      CHECK(rebuilt.corpus.tokens == first.corpus.tokens);
    }
    {  // a length swapped between two pairs: the token count still adds up
      std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
      const uint32_t lengths[2] = {0, 4};  // the first pair: source 2 → 0 tokens, target 2 → 4
      f.seekp(88);
      f.write(reinterpret_cast<const char*>(lengths), sizeof lengths);
    }
    CHECK_FALSE(load_parallel_corpus({src}, {tgt}, tok, filter, cache).stats.from_cache);
    CHECK(load_parallel_corpus({src}, {tgt}, tok, filter, cache).stats.from_cache);
    {  // the last two ids swapped, and the first pair's lengths: every id and length still valid
      std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
      uint16_t ids[2];
      f.seekg(-4, std::ios::end);
      f.read(reinterpret_cast<char*>(ids), sizeof ids);
      REQUIRE(ids[0] != ids[1]);
      std::swap(ids[0], ids[1]);
      f.seekp(-4, std::ios::end);
      f.write(reinterpret_cast<const char*>(ids), sizeof ids);
    }
    const LoadedCorpus swapped = load_parallel_corpus({src}, {tgt}, tok, filter, cache);
    CHECK_FALSE(swapped.stats.from_cache);
    CHECK(swapped.corpus.tokens == first.corpus.tokens);
    {
      std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
      const uint32_t lengths[2] = {1, 3};  // the first pair was 2 and 2 tokens
      f.seekp(88);
      f.write(reinterpret_cast<const char*>(lengths), sizeof lengths);
    }
    CHECK_FALSE(load_parallel_corpus({src}, {tgt}, tok, filter, cache).stats.from_cache);
    CHECK(load_parallel_corpus({src}, {tgt}, tok, filter, cache).stats.from_cache);
  }
  SECTION("a damaged cache file is rebuilt") {
    fs::resize_file(path, fs::file_size(path) - 1);
    const LoadedCorpus rebuilt = load_parallel_corpus({src}, {tgt}, tok, filter, cache);
    CHECK_FALSE(rebuilt.stats.from_cache);
    CHECK(rebuilt.corpus.tokens == first.corpus.tokens);
    CHECK(load_parallel_corpus({src}, {tgt}, tok, filter, cache).stats.from_cache);
  }
}

TEST_CASE("the cache stores ids above 65535 at full width and rejects a wrong key") {
  TempDir dir;
  LoadedCorpus big;
  big.corpus.add({70000, 5}, {3});
  big.corpus.add({}, {65535, 65536});
  big.stats.pairs_read = 4;
  big.stats.kept = 2;
  big.stats.skipped_ratio = 2;
  const std::string path = (dir.path / "sub" / "c.bin").string();
  write_corpus_cache(path, 42, big);
  CHECK(fs::file_size(path) == 88 + 4 * 4 + 5 * 4);

  LoadedCorpus back;
  REQUIRE(read_corpus_cache(path, 42, back));
  CHECK(back.corpus.tokens == big.corpus.tokens);
  CHECK(back.corpus.offsets == big.corpus.offsets);
  CHECK(back.stats.skipped_ratio == 2);
  CHECK(back.stats.from_cache);
  CHECK_FALSE(read_corpus_cache(path, 43, back));
  CHECK_FALSE(read_corpus_cache((dir.path / "none.bin").string(), 42, back));

  LoadedCorpus small;
  small.corpus.add({4, 5}, {6});
  write_corpus_cache(path, 7, small);
  CHECK(fs::file_size(path) == 88 + 2 * 4 + 3 * 2);  // ids below 65536: two bytes each
}
