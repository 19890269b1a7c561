#pragma once
// Training pairs: aligned plain-text files (line i of a source file translates line i of its
// target file), several corpora concatenated, encoded to token ids once and cached on disk.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "text/tokenizers.hpp"

namespace heed {

// Token ids of every kept pair, without <s>/</s>, stored contiguously.
struct ParallelCorpus {
  std::vector<int32_t> tokens;
  // 2 * size() + 1 entries: pair i's source is tokens[offsets[2i], offsets[2i+1]), its target
  // tokens[offsets[2i+1], offsets[2i+2]).
  std::vector<uint64_t> offsets{0};

  size_t size() const { return (offsets.size() - 1) / 2; }
  std::span<const int32_t> source(size_t i) const { return span(offsets[2 * i], offsets[2 * i + 1]); }
  std::span<const int32_t> target(size_t i) const { return span(offsets[2 * i + 1], offsets[2 * i + 2]); }
  void add(const std::vector<int>& source_ids, const std::vector<int>& target_ids);

 private:
  std::span<const int32_t> span(uint64_t begin, uint64_t end) const {
    return {tokens.data() + begin, size_t(end - begin)};
  }
};

// Which pairs training skips. Lengths count tokens including </s>.
struct CorpusFilter {
  int max_length = 100;         // skip a pair when either side is longer; <= 0: no limit
  double max_length_ratio = 0;  // skip when longer side / shorter side > this; 0: no limit
  uint64_t first_lines = 0;     // read only the first this many lines of each file pair; 0: all
};

// What loading did; every skipped pair is counted under the first reason that applies.
struct CorpusStats {
  uint64_t pairs_read = 0;  // lines of all source files
  uint64_t kept = 0;
  uint64_t skipped_empty = 0;     // either side empty after trimming whitespace
  uint64_t skipped_too_long = 0;  // either side over max_length tokens
  uint64_t skipped_ratio = 0;     // length ratio over max_length_ratio
  bool from_cache = false;        // true when the encoded corpus came from the cache
};

struct LoadedCorpus {
  ParallelCorpus corpus;
  CorpusStats stats;
};

// Reads the corpora source_files[k] / target_files[k] (k = 0, 1, ...) in that order, trims
// whitespace at both ends of every line, encodes the source side with tokenizers.source() and the
// target side with tokenizers.target(), and keeps the pairs the filter allows. Checks, before
// any tokenizing, that the lists have the same length and every pair of files the same number
// of lines (error naming both files and both counts); invalid UTF-8 or a NUL byte (a UTF-16
// file) is an error naming file:line. Skip counts are logged. With a non-empty cache_dir the
// encoded corpus is stored there and reused while the files (path, size, modification time), the
// tokenizers and the filter are unchanged (see corpus_cache.hpp).
LoadedCorpus load_parallel_corpus(const std::vector<std::string>& source_files,
                                  const std::vector<std::string>& target_files, const Tokenizers& tokenizers,
                                  const CorpusFilter& filter, const std::string& cache_dir);

// load_parallel_corpus's checks of the files alone (the lists pair up, each pair has as many
// lines on both sides; a NUL byte is an error), with its errors: for a caller that has slow work
// to do with the files before loading them (learning a tokenizer from them).
void check_parallel_files(const std::vector<std::string>& source_files, const std::vector<std::string>& target_files);

}  // namespace heed
