#pragma once
// A model directory for CLI tests, built in a fraction of a second: a BPE tokenizer learned from
// the test sample text and a tiny model with random weights, saved exactly as `heed train` saves
// them (config.json, tokenizer.json, model.safetensors).
#include <filesystem>
#include <string>

#include "../fixtures/tiny_models.hpp"
#include "config/config.hpp"
#include "models/factory.hpp"
#include "text/tokenizers.hpp"
#include "train/checkpoint.hpp"

namespace heed::test {

// Writes the model directory `dir` (created if needed) and returns it. Models of the same
// vocabulary size share their tokenizer (learned deterministically from the same text).
inline std::string make_tiny_model_dir(const std::string& dir, Arch arch = Arch::gru_bahdanau,
                                       int vocab_size = 400) {
  std::filesystem::create_directories(dir);
  Config config = default_config();
  config.model = test::tiny_model_config(arch);
  config.decoding.max_length_ratio = 1;  // random weights rarely stop by themselves: keep outputs short
  config.decoding.max_length_offset = 2;
  TokenizerOptions tokenizer_options;
  tokenizer_options.vocab_size = vocab_size;
  const Tokenizers tokenizers = Tokenizers::joint(Tokenizer::train(
      {std::string(HEED_TEST_FIXTURES) + "/text/sample.en", std::string(HEED_TEST_FIXTURES) + "/text/sample.de"},
      tokenizer_options));
  const int vocab = tokenizers.source().vocab_size();
  const auto model = make_model(config.model, vocab, vocab, config.seed);
  tokenizers.save(dir + "/tokenizer.json");
  save_parameters(dir + "/model.safetensors", model->parameters());
  save_config(config, dir + "/config.json");
  return dir;
}

}  // namespace heed::test
