#pragma once
// A model directory: config.json (the effective config), tokenizer.json, model.safetensors
// (the parameters, by name, in the real safetensors format) and, for training, the trainer state
// (trainer_state.safetensors) plus best/last checkpoints. Every file is written atomically.
#include <map>
#include <memory>
#include <string>

#include "config/config.hpp"
#include "models/seq2seq.hpp"
#include "text/tokenizers.hpp"

namespace heed {

struct ModelBundle {
  Config config;
  Tokenizers tokenizers;
  std::unique_ptr<Seq2Seq> model;
};

// Writes the parameters (tied tensors once; aliases and `metadata` in __metadata__).
void save_parameters(const std::string& path, const ParameterSet& params,
                     const std::map<std::string, std::string>& metadata = {});
// Reads parameters by name into `params`; a missing name, an extra name or a shape mismatch is a
// clear heed::Error naming the file and the tensor.
void load_parameters(const std::string& path, const ParameterSet& params);

// Loads <dir>/config.json, <dir>/tokenizer.json and <dir>/<weights> (default model.safetensors).
ModelBundle load_model_dir(const std::string& dir, const std::string& weights = "model.safetensors");

}  // namespace heed
