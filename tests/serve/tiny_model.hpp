#pragma once
// A tiny random-weight GRU and the BPE tokenizer of the test sample text, for the serve tests:
// outputs are arbitrary but deterministic, and short (see short_search).
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "../fixtures/tiny_models.hpp"
#include "decode/beam_search.hpp"
#include "models/factory.hpp"
#include "text/tokenizers.hpp"

namespace heed::test {

inline const Tokenizers& sample_tokenizers() {
  static const Tokenizers t = [] {
    TokenizerOptions opts;
    opts.vocab_size = 400;
    const std::filesystem::path text = std::filesystem::path(HEED_TEST_FIXTURES) / "text";
    return Tokenizers::joint(Tokenizer::train({(text / "sample.en").string(), (text / "sample.de").string()}, opts));
  }();
  return t;
}

inline std::unique_ptr<Seq2Seq> tiny_gru() {
  const ModelConfig c = heed::test::tiny_model_config(Arch::gru_bahdanau);
  const int v = sample_tokenizers().source().vocab_size();
  return make_model(c, v, v, 7);
}

// Random weights rarely choose </s>: keep outputs short.
inline DecodingConfig short_search() {
  DecodingConfig s;
  s.max_length_ratio = 0.5f;
  s.max_length_offset = 2;
  return s;
}

// The first `n` lines of the sample text of at most 80 bytes.
inline std::vector<std::string> sample_lines(size_t n) {
  std::ifstream in(std::string(HEED_TEST_FIXTURES) + "/text/sample.en");
  std::vector<std::string> lines;
  for (std::string l; lines.size() < n && std::getline(in, l);)
    if (l.size() <= 80) lines.push_back(l);
  return lines;
}

}  // namespace heed::test
