#pragma once
// The models a decoding command is given with -m (one, or several for an ensemble), loaded and
// checked to share their tokenizers, and the one Seq2Seq the search runs: the model itself, or
// the ensemble of them. Settings (decoding, data.max_length) come from the first model's config.
#include <memory>
#include <string>
#include <vector>

#include "decode/ensemble.hpp"
#include "train/checkpoint.hpp"

namespace heed::cli {

class DecoderModels {
 public:
  // UsageError when two models' tokenizers differ (naming which side and which directories).
  explicit DecoderModels(const std::vector<std::string>& dirs);

  // The step products' precision of each model: int8 or fp32, or auto: int8 for a model whose
  // file is int8 (heed quantize), fp32 for the others.
  void set_precision(DecodingPrecision precision);

  Seq2Seq& model() { return ensemble_ ? static_cast<Seq2Seq&>(*ensemble_) : *bundles_.front().model; }
  const Config& config() const { return bundles_.front().config; }
  const Tokenizers& tokenizers() const { return bundles_.front().tokenizers; }
  const std::string& first_dir() const { return dirs_.front(); }
  // "transformer model" or "ensemble of 2 models (gru-bahdanau + transformer)", with "int8"
  // before "model" when the step products are int8.
  std::string description() const;

 private:
  std::vector<std::string> dirs_;
  std::vector<ModelBundle> bundles_;
  std::unique_ptr<Ensemble> ensemble_;
};

}  // namespace heed::cli
