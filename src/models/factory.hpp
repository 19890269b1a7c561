#pragma once
// Models are chosen by the config's model.arch.
#include <memory>

#include "config/config.hpp"
#include "models/seq2seq.hpp"

namespace heed {

std::unique_ptr<Seq2Seq> make_model(const ModelConfig& config, int src_vocab, int tgt_vocab, uint64_t seed);
int64_t model_parameter_count(const ModelConfig& config, int src_vocab, int tgt_vocab);

}  // namespace heed
