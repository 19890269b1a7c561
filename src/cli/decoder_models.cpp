#include "cli/decoder_models.hpp"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "tensor/precision.hpp"
#include "tensor/quantize.hpp"
#include "util/error.hpp"

namespace heed::cli {

DecoderModels::DecoderModels(const std::vector<std::string>& dirs) : dirs_(dirs) {
  if (dirs_.empty()) throw UsageError("-m: give at least one model directory");
  for (const auto& dir : dirs_) bundles_.push_back(load_model_dir(dir));
  if (bundles_.size() == 1) return;
  const Tokenizers& first = bundles_.front().tokenizers;
  std::vector<Seq2Seq*> members;
  for (size_t i = 0; i < bundles_.size(); ++i) {
    const Tokenizers& mine = bundles_[i].tokenizers;
    for (const auto& [side, same] : {std::pair{"target", mine.target().to_json() == first.target().to_json()},
                                     std::pair{"source", mine.source().to_json() == first.source().to_json()}})
      if (!same)
        throw UsageError("-m " + dirs_[i] + ": its " + side + " tokenizer differs from that of -m " + dirs_[0] +
                         "; an ensemble's models need the same vocabularies (train them on the same data, or with tokenizer.path set to one tokenizer.json)");
    members.push_back(bundles_[i].model.get());
  }
  ensemble_ = std::make_unique<Ensemble>(members);
}

void DecoderModels::set_precision(DecodingPrecision precision) {
  // bf16: every product (the step weights are packed in it); set before any step weights are made
  set_matmul_precision(precision == DecodingPrecision::bf16
                           ? resolve_precision(PrecisionRequest::bf16, cpu_has_bf16(), "decoding.precision (--precision)")
                           : MatmulPrecision::fp32);
  bool any_int8 = false;
  for (size_t i = 0; i < bundles_.size(); ++i) {
    ModelBundle& b = bundles_[i];
    bool int8 = precision == DecodingPrecision::int8 || (precision == DecodingPrecision::auto_ && b.int8);
    if (int8 && !b.model->has_step_weights()) {
      spdlog::warn("-m {}: the {} model's steps have no weight products for int8: it decodes in fp32", dirs_[i],
                   b.model->arch());
      int8 = false;
    }
    b.model->set_step_precision(int8 ? StepPrecision::int8 : StepPrecision::fp32);
    any_int8 = any_int8 || int8;
  }
  if (any_int8 && int8_weight_levels() < 127)
    spdlog::warn("this CPU has no VNNI: int8 products use 7-bit weights (see tensor/quantize.hpp) and run at its "
                 "int8 rate without VNNI; --precision fp32 decodes with the same weights in fp32");
}

std::string DecoderModels::description() const {
  const auto name = [](const ModelBundle& b) {
    if (b.model->step_precision() == StepPrecision::int8) return b.model->arch() + " int8";
    return b.model->arch() + (matmul_precision() == MatmulPrecision::bf16 ? " bf16" : "");
  };
  if (!ensemble_) return name(bundles_.front()) + " model";
  std::string archs;
  for (const auto& b : bundles_) archs += (archs.empty() ? "" : " + ") + name(b);
  return "ensemble of " + std::to_string(bundles_.size()) + " models (" + archs + ")";
}

}  // namespace heed::cli
