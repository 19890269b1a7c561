#pragma once
// Models are chosen by name ("arch" in the config's model section).
#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "models/seq2seq.hpp"

namespace heed {

std::unique_ptr<Seq2Seq> make_model(const ModelConfig& config, int src_vocab, int tgt_vocab, uint64_t seed);
int64_t model_parameter_count(const ModelConfig& config, int src_vocab, int tgt_vocab);
std::vector<std::string> model_architectures();

}  // namespace heed
