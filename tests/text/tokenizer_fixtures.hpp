#pragma once
// Shared by the tokenizer tests: the real-text sample and a tokenizer trained on it once.
#include <string>
#include <vector>

#include "text/tokenizers.hpp"
#include "util/text_lines.hpp"

namespace heed::test {

inline std::vector<std::string> sample_files() {
  return {std::string(HEED_TEST_FIXTURES) + "/text/sample.en", std::string(HEED_TEST_FIXTURES) + "/text/sample.de"};
}

inline std::vector<std::string> sample_lines() {
  std::vector<std::string> lines;
  for (const auto& f : sample_files())
    for (auto& line : read_lines_utf8(f)) lines.push_back(std::move(line));
  return lines;
}

inline const Tokenizer& sample_tokenizer() {
  static const Tokenizer t = [] {
    TokenizerOptions opts;
    opts.vocab_size = 1000;
    return Tokenizer::train(sample_files(), opts);
  }();
  return t;
}

}  // namespace heed::test
