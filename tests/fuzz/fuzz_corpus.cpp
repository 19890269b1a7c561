// The parallel corpus reader: two text files (the input split at its first NUL byte) read,
// checked (same line count, UTF-8), trimmed, encoded and filtered as training reads them. Either
// a corpus or a heed::Error; every kept pair fits the filter and the vocabulary, and the counts
// add up.
#include <spdlog/spdlog.h>

#include <unordered_map>

#include "data/parallel_corpus.hpp"
#include "fuzz_common.hpp"
#include "util/threads.hpp"

namespace {
const heed::Tokenizers& tokenizers() {
  static const heed::Tokenizers tok = [] {
    heed::set_num_threads(1);
    spdlog::set_level(spdlog::level::off);  // the reader logs its counts at every call
    std::unordered_map<std::string, int64_t> counts;
    for (const char* word : {" the", " file", " not", " found", " Datei", " nicht", " gefunden", " 123"})
      counts[word] = 20;
    heed::TokenizerOptions options;
    options.vocab_size = 300;
    return heed::Tokenizers::joint(heed::Tokenizer::train_from_word_counts(counts, options));
  }();
  return tok;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace heed;
  const std::string input = fuzz::text(data, size);
  const size_t split = input.find('\0');
  if (split == std::string::npos || size < 2) return 0;
  const std::string src = fuzz::scratch_file("corpus.src", input.substr(1, split - 1));
  const std::string tgt = fuzz::scratch_file("corpus.tgt", input.substr(split + 1));
  const CorpusFilter filter{1 + data[0] % 16, (data[0] & 0x80) ? 1.5 : 0.0};
  fuzz::expect_errors_only([&] {
    const LoadedCorpus loaded = load_parallel_corpus({src}, {tgt}, tokenizers(), filter, "");
    const CorpusStats& s = loaded.stats;
    if (s.kept != loaded.corpus.size() ||
        s.pairs_read != s.kept + s.skipped_empty + s.skipped_too_long + s.skipped_ratio)
      fuzz::broken("the corpus counts do not add up");
    for (size_t i = 0; i < loaded.corpus.size(); ++i)
      for (auto ids : {loaded.corpus.source(i), loaded.corpus.target(i)}) {
        if (ids.empty() || ids.size() + 1 > size_t(filter.max_length)) fuzz::broken("a kept pair breaks the filter");
        for (int32_t id : ids)
          if (id < kFirstByteId || id >= tokenizers().source().vocab_size()) fuzz::broken("id out of range");
      }
  });
  return 0;
}
