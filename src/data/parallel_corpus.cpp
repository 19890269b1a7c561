#include "data/parallel_corpus.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>

#include "data/corpus_cache.hpp"
#include "util/error.hpp"
#include "util/interrupt.hpp"
#include "util/text_lines.hpp"

namespace heed {

namespace {

void check_file_lists(const std::vector<std::string>& source_files, const std::vector<std::string>& target_files) {
  if (source_files.empty()) throw Error("no training files given");
  if (source_files.size() != target_files.size())
    throw Error(std::to_string(source_files.size()) + " source files but " + std::to_string(target_files.size()) +
                " target files: they must pair up");
}

void check_line_counts(const std::vector<std::string>& source_files, const std::vector<std::string>& target_files) {
  for (size_t k = 0; k < source_files.size(); ++k) {
    const size_t source_lines = count_text_lines(source_files[k]);
    const size_t target_lines = count_text_lines(target_files[k]);
    if (source_lines != target_lines)
      throw Error("parallel files differ in length: " + source_files[k] + " has " + std::to_string(source_lines) +
                  " lines, " + target_files[k] + " has " + std::to_string(target_lines));
  }
}

// Lines are read (and checked: UTF-8, no NUL) in order, encoded in parallel a chunk at a time, then
// filtered in order: the result does not depend on the thread count.
void encode_files(const std::string& source_file, const std::string& target_file, const Tokenizers& tok,
                  const CorpusFilter& filter, LoadedCorpus& out) {
  constexpr size_t kChunk = 16384;
  LineReader source_reader(source_file), target_reader(target_file);
  std::vector<std::string> sources, targets;
  std::vector<std::vector<int>> source_ids(kChunk), target_ids(kChunk);
  CorpusStats& stats = out.stats;
  uint64_t lines = 0;  // of this file pair
  const auto more_wanted = [&] { return filter.first_lines == 0 || lines < filter.first_lines; };
  for (;;) {
    throw_if_interrupted();
    sources.clear();
    targets.clear();
    std::string s, t;
    while (sources.size() < kChunk && more_wanted() && source_reader.next_text(s)) {
      ++lines;
      if (!target_reader.next_text(t))
        throw Error(target_file + " ended before " + source_file + " (it changed while being read?)");
      sources.emplace_back(trim_space(s));
      targets.emplace_back(trim_space(t));
    }
    if (sources.empty()) break;
    const long n = long(sources.size());
    std::exception_ptr failure;
#pragma omp parallel for schedule(dynamic, 256)
    for (long i = 0; i < n; ++i) {
      try {
        source_ids[i] = sources[i].empty() ? std::vector<int>{} : tok.source().encode(sources[i]);
        target_ids[i] = targets[i].empty() ? std::vector<int>{} : tok.target().encode(targets[i]);
      } catch (...) {
#pragma omp critical
        failure = std::current_exception();
      }
    }
    if (failure) std::rethrow_exception(failure);
    for (long i = 0; i < n; ++i) {
      ++stats.pairs_read;
      if (sources[i].empty() || targets[i].empty()) {
        ++stats.skipped_empty;
        continue;
      }
      const size_t ls = source_ids[i].size() + 1, lt = target_ids[i].size() + 1;  // with </s>
      if (filter.max_length > 0 && std::max(ls, lt) > size_t(filter.max_length)) {
        ++stats.skipped_too_long;
        continue;
      }
      if (filter.max_length_ratio > 0 &&
          double(std::max(ls, lt)) / double(std::min(ls, lt)) > filter.max_length_ratio) {
        ++stats.skipped_ratio;
        continue;
      }
      out.corpus.add(source_ids[i], target_ids[i]);
      ++stats.kept;
    }
  }
  std::string extra;
  if (more_wanted() && target_reader.next(extra))
    throw Error(source_file + " ended before " + target_file + " (it changed while being read?)");
}

// What a damaged cache can hold that its sizes do not show: ids outside the vocabularies (or
// specials encoding never gives), pairs with an empty side or beyond the length filter. Empty
// when the corpus is one that loading could have produced.
std::string implausible(const ParallelCorpus& corpus, const Tokenizers& tokenizers, const CorpusFilter& filter) {
  for (size_t i = 0; i < corpus.size(); ++i) {
    for (int side = 0; side < 2; ++side) {
      const auto ids = side == 0 ? corpus.source(i) : corpus.target(i);
      const Tokenizer& tok = side == 0 ? tokenizers.source() : tokenizers.target();
      if (ids.empty()) return "pair " + std::to_string(i + 1) + " has an empty side";
      if (filter.max_length > 0 && ids.size() + 1 > size_t(filter.max_length))
        return "pair " + std::to_string(i + 1) + " is longer than the length limit";
      for (int32_t id : ids)
        if (id < kFirstByteId || id >= tok.vocab_size())
          return "token id " + std::to_string(id) + " outside the vocabulary";
    }
  }
  return "";
}

void log_stats(const CorpusStats& s, const CorpusFilter& filter) {
  spdlog::info(
      "training corpus: {} pairs read, {} kept; skipped {} empty, {} longer than {} tokens, "
      "{} with a length ratio above {}",
      s.pairs_read, s.kept, s.skipped_empty, s.skipped_too_long, filter.max_length, s.skipped_ratio,
      filter.max_length_ratio);
}

}  // namespace

void check_parallel_files(const std::vector<std::string>& source_files, const std::vector<std::string>& target_files) {
  check_file_lists(source_files, target_files);
  check_line_counts(source_files, target_files);
}

void ParallelCorpus::add(const std::vector<int>& source_ids, const std::vector<int>& target_ids) {
  tokens.insert(tokens.end(), source_ids.begin(), source_ids.end());
  offsets.push_back(tokens.size());
  tokens.insert(tokens.end(), target_ids.begin(), target_ids.end());
  offsets.push_back(tokens.size());
}

LoadedCorpus load_parallel_corpus(const std::vector<std::string>& source_files,
                                  const std::vector<std::string>& target_files, const Tokenizers& tokenizers,
                                  const CorpusFilter& filter, const std::string& cache_dir) {
  check_file_lists(source_files, target_files);
  LoadedCorpus loaded;
  std::string cache_path;
  uint64_t key = 0;
  if (!cache_dir.empty()) {
    key = corpus_cache_key(source_files, target_files, tokenizers, filter);
    cache_path = corpus_cache_path(cache_dir, key);
    if (read_corpus_cache(cache_path, key, loaded)) {
      const std::string damage = implausible(loaded.corpus, tokenizers, filter);
      if (damage.empty()) {
        spdlog::info("training corpus: loaded from the cache {}", cache_path);
        log_stats(loaded.stats, filter);
        return loaded;
      }
      spdlog::warn("ignoring corpus cache {}: {} (damaged?); rebuilding it", cache_path, damage);
      loaded = LoadedCorpus();
    }
  }
  check_line_counts(source_files, target_files);  // before any tokenizing
  for (size_t k = 0; k < source_files.size(); ++k)
    encode_files(source_files[k], target_files[k], tokenizers, filter, loaded);

  log_stats(loaded.stats, filter);
  if (!cache_path.empty()) {
    try {  // the cache only saves time: failing to write it must not stop training
      write_corpus_cache(cache_path, key, loaded);
      spdlog::info("training corpus cached in {}", cache_path);
    } catch (const Error& e) {
      spdlog::warn("could not cache the encoded corpus: {}", e.what());
    }
  }
  return loaded;
}

}  // namespace heed
