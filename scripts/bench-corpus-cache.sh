#!/usr/bin/env bash
# How long the encoded-corpus cache takes to load, next to what it saves (tokenizing the text).
#
#   scripts/bench-corpus-cache.sh CORPUS_DIR [BUILD_DIR [COPIES]]
#
# CORPUS_DIR holds train.en / train.de; they are repeated COPIES times (default 4; 4 x 260,798
# pairs of the project's en-de corpus = 1.04M pairs) into a temporary folder. A BPE tokenizer
# (8,000 pieces) is learned from data/train.*; then the corpus is encoded once (cache miss, which
# writes the cache) and loaded from the cache 5 times. Prints the miss time, the median hit time,
# their ratio and the load average. Needs the static libraries of a configured build
# (BUILD_DIR, default build): cmake --build BUILD_DIR --target heed_data
set -euo pipefail

corpus=${1:?usage: scripts/bench-corpus-cache.sh CORPUS_DIR [BUILD_DIR [COPIES]]}
build=${2:-build}
copies=${3:-4}
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for side in en de; do
  for ((i = 0; i < copies; i++)); do cat "$corpus/train.$side"; done > "$work/train.$side"
done

cat > "$work/bench.cpp" <<'CPP'
#include <spdlog/spdlog.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <vector>
#include "data/corpus_cache.hpp"
#include "data/parallel_corpus.hpp"
using namespace heed;
static double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
int main(int argc, char** argv) {
  const std::string repo = argv[1], work = argv[2];
  spdlog::set_level(spdlog::level::warn);
  TokenizerOptions options;
  const Tokenizers tok = Tokenizers::joint(Tokenizer::train({repo + "/data/train.en", repo + "/data/train.de"}, options));
  const std::vector<std::string> src{work + "/train.en"}, tgt{work + "/train.de"};
  auto t0 = std::chrono::steady_clock::now();
  const LoadedCorpus built = load_parallel_corpus(src, tgt, tok, {}, work + "/cache");
  const double miss = seconds_since(t0);
  std::vector<double> hits;
  for (int i = 0; i < 5; ++i) {
    t0 = std::chrono::steady_clock::now();
    const LoadedCorpus loaded = load_parallel_corpus(src, tgt, tok, {}, work + "/cache");
    hits.push_back(seconds_since(t0));
    if (!loaded.stats.from_cache || loaded.corpus.tokens != built.corpus.tokens) return 1;
  }
  std::sort(hits.begin(), hits.end());
  t0 = std::chrono::steady_clock::now();
  const uint64_t key = corpus_cache_key(src, tgt, tok, {});
  const double keying = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  const std::clock_t cpu0 = std::clock();
  LoadedCorpus read_only;
  if (!read_corpus_cache(corpus_cache_path(work + "/cache", key), key, read_only)) return 1;
  const double reading = seconds_since(t0), reading_cpu = double(std::clock() - cpu0) / CLOCKS_PER_SEC;
  std::printf("pairs kept %zu of %llu, tokens %zu\n", built.corpus.size(),
              (unsigned long long)built.stats.pairs_read, built.corpus.tokens.size());
  std::printf("encode + write cache (miss): %.2f s\n", miss);
  std::printf("load from cache (hit), median of 5: %.3f s (min %.3f, max %.3f)\n", hits[2], hits[0], hits[4]);
  std::printf("  of which: cache key (stat + tokenizer JSON hash) %.3f s, reading the file %.3f s (CPU %.3f s)\n", keying, reading, reading_cpu);
  std::printf("ratio miss / hit: %.1fx\n", miss / hits[2]);
}
CPP
g++ -std=c++20 -O2 -fopenmp -DSPDLOG_SHARED_LIB -DSPDLOG_COMPILED_LIB -DSPDLOG_FMT_EXTERNAL -I"$repo/src" "$work/bench.cpp" \
  "$build/src/libheed_data.a" "$build/src/libheed_text.a" "$build/src/libheed_util.a" \
  -lspdlog -lfmt -o "$work/bench"
ls -l "$work/train.en" "$work/train.de" | awk '{print $5, $9}'
"$work/bench" "$repo" "$work"
ls -l "$work"/cache/*.bin | awk '{print "cache file bytes:", $5}'
uptime
