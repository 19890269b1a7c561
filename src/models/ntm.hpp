#pragma once
#include <memory>

#include "config/config.hpp"
#include "models/seq2seq.hpp"

namespace heed {

std::unique_ptr<Seq2Seq> make_ntm(const ModelConfig& config, int src_vocab, int tgt_vocab, uint64_t seed);

// The closed-form parameter count of the equations in ntm.cpp.
int64_t ntm_parameter_count(const ModelConfig& config, int src_vocab, int tgt_vocab);

}  // namespace heed
