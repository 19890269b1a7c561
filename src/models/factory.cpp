#include "models/factory.hpp"

#include <functional>
#include <map>

#include "models/gru_bahdanau.hpp"
#include "models/ntm.hpp"
#include "models/transformer.hpp"
#include "util/error.hpp"

namespace heed {
namespace {
struct Architecture {
  std::function<std::unique_ptr<Seq2Seq>(const ModelConfig&, int, int, uint64_t)> make;
  std::function<int64_t(const ModelConfig&, int, int)> count;
};

const Architecture& find(Arch arch) {
  static const std::map<Arch, Architecture> architectures{
      {Arch::gru_bahdanau, {make_gru_bahdanau, gru_bahdanau_parameter_count}},
      {Arch::transformer, {make_transformer, transformer_parameter_count}},
      {Arch::ntm, {make_ntm, ntm_parameter_count}},
  };
  auto it = architectures.find(arch);
  if (it == architectures.end()) throw UsageError("model.arch: no model for '" + std::string(name_of(arch)) + "'");
  return it->second;
}
}  // namespace

std::unique_ptr<Seq2Seq> make_model(const ModelConfig& config, int src_vocab, int tgt_vocab, uint64_t seed) {
  return find(config.arch).make(config, src_vocab, tgt_vocab, seed);
}

int64_t model_parameter_count(const ModelConfig& config, int src_vocab, int tgt_vocab) {
  return find(config.arch).count(config, src_vocab, tgt_vocab);
}

}  // namespace heed
