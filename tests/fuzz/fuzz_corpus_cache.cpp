// The encoded-corpus cache reader (a binary file trusted only after its checks): any bytes give
// a corpus or "ignore and rebuild" (false), never a crash or a corpus whose offsets leave its
// tokens. The key is taken from the input itself, so that the fuzzer gets past the key check.
#include <spdlog/spdlog.h>

#include <cstring>

#include "data/corpus_cache.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);  // "ignoring corpus cache ...": the expected outcome, every time
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace heed;
  uint64_t key = 0;
  if (size >= 16) std::memcpy(&key, data + 8, sizeof key);
  const std::string path = fuzz::scratch_file("corpus.bin", fuzz::text(data, size));
  LoadedCorpus loaded;
  fuzz::expect_errors_only([&] {
    if (!read_corpus_cache(path, key, loaded)) return;
    const ParallelCorpus& c = loaded.corpus;
    if (c.offsets.empty() || c.offsets.size() % 2 != 1 || c.offsets.back() != c.tokens.size())
      fuzz::broken("offsets do not cover the tokens");
    for (size_t i = 1; i < c.offsets.size(); ++i)
      if (c.offsets[i] < c.offsets[i - 1]) fuzz::broken("offsets decrease");
  });
  return 0;
}
