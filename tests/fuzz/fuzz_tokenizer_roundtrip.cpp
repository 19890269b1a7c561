// Encode and decode with a learned tokenizer: decode(encode(x)) == x for every valid UTF-8 x
// (no normalisation, byte fallback); pieces and ids stay in the vocabulary; decode of any ids
// is valid UTF-8. The tokenizer is learned once from a small fixed text.
#include <unordered_map>

#include "fuzz_common.hpp"
#include "text/tokenizer.hpp"
#include "util/utf8.hpp"

namespace {
const heed::Tokenizer& tokenizer() {
  static const heed::Tokenizer tok = [] {
    std::unordered_map<std::string, int64_t> counts;
    for (const char* word : {" the", " file", " was", " not", " found", " Datei", " nicht", " gefunden", " über",
                             " 123", " (next", " page)", " 東京", " naïve", "\tx", " ▁"})
      counts[word] = 20;
    heed::TokenizerOptions options;
    options.vocab_size = 330;
    return heed::Tokenizer::train_from_word_counts(counts, options);
  }();
  return tok;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace heed;
  const Tokenizer& tok = tokenizer();
  const std::string input = fuzz::text(data, size);
  if (find_invalid_utf8(input) == std::string::npos) {
    const std::vector<int> ids = tok.encode(input);
    for (int id : ids)
      if (id < kFirstByteId || id >= tok.vocab_size()) fuzz::broken("encode gave id " + std::to_string(id));
    if (tok.decode(ids) != input) fuzz::broken("decode(encode(x)) != x");
  }
  // The same bytes read as token ids (two bytes each): decode must give valid UTF-8 or an error.
  std::vector<int> ids;
  for (size_t i = 0; i + 1 < size; i += 2) ids.push_back((data[i] | data[i + 1] << 8) % (tok.vocab_size() + 8) - 4);
  fuzz::expect_errors_only([&] {
    if (find_invalid_utf8(tok.decode(ids)) != std::string::npos) fuzz::broken("decode gave invalid UTF-8");
  });
  return 0;
}
