#pragma once
// A model directory: config.json (the effective config), tokenizer.json, model.safetensors
// (the parameters, by name, in the real safetensors format) and, for training, the trainer state
// (trainer_state.safetensors) plus best/last checkpoints. Every file is written atomically.
#include <map>
#include <memory>
#include <string>

#include "config/config.hpp"
#include "io/safetensors.hpp"
#include "models/seq2seq.hpp"
#include "text/tokenizers.hpp"

namespace heed {

struct ModelBundle {
  Config config;
  Tokenizers tokenizers;
  std::unique_ptr<Seq2Seq> model;
  bool int8 = false;  // its parameters file is an int8 one (heed quantize)
};

// int8 parameter files (heed quantize): each large matrix (quantizable()) is stored as its rows
// quantized to int8, `NAME` with dtype I8 and the same shape, plus their scales
// `NAME.int8_scales` (F32, one per row: NAME[r] ≈ scales[r] · q[r], see tensor/quantize.hpp);
// every other tensor stays F32, and __metadata__ has "precision": "int8". Loading dequantizes.
inline constexpr const char* kInt8ScalesSuffix = ".int8_scales";
// 2-D, at least 8 rows and 8 columns: embeddings and projections, not biases, norms or vectors.
bool quantizable(const Tensor& t);

// Writes the parameters (tied tensors once; aliases and `metadata` in __metadata__), in F32 or,
// with int8, as an int8 file.
void save_parameters(const std::string& path, const ParameterSet& params,
                     const std::map<std::string, std::string>& metadata = {}, bool int8 = false);
// Reads parameters by name into `params`; a missing name, an extra name or a shape mismatch is a
// clear heed::Error naming the file and the tensor. True when the file is an int8 one.
bool load_parameters(const std::string& path, const ParameterSet& params);
// The same from a file already in memory; `origin` names it in errors.
bool load_parameters(const SafeTensorFile& file, const std::string& origin, const ParameterSet& params);

// Loads <dir>/config.json, <dir>/tokenizer.json and <dir>/<weights> (default model.safetensors).
ModelBundle load_model_dir(const std::string& dir, const std::string& weights = "model.safetensors");

}  // namespace heed
