#include "models/factory.hpp"

#include <functional>
#include <map>

#include "models/gru_bahdanau.hpp"
#include "models/ntm.hpp"
#include "models/transformer.hpp"
#include "util/error.hpp"

namespace heed {
namespace {
struct Arch {
  std::function<std::unique_ptr<Seq2Seq>(const ModelConfig&, int, int, uint64_t)> make;
  std::function<int64_t(const ModelConfig&, int, int)> count;
};

const std::map<std::string, Arch>& registry() {
  static const std::map<std::string, Arch> archs{
      {"gru-bahdanau", {make_gru_bahdanau, gru_bahdanau_parameter_count}},
      {"transformer", {make_transformer, transformer_parameter_count}},
      {"ntm", {make_ntm, ntm_parameter_count}},
  };
  return archs;
}

const Arch& find(const std::string& name) {
  auto it = registry().find(name);
  if (it == registry().end()) throw UsageError("model.arch: unknown architecture '" + name + "'");
  return it->second;
}
}  // namespace

std::unique_ptr<Seq2Seq> make_model(const ModelConfig& config, int src_vocab, int tgt_vocab, uint64_t seed) {
  return find(config.arch).make(config, src_vocab, tgt_vocab, seed);
}

int64_t model_parameter_count(const ModelConfig& config, int src_vocab, int tgt_vocab) {
  return find(config.arch).count(config, src_vocab, tgt_vocab);
}

std::vector<std::string> model_architectures() {
  std::vector<std::string> names;
  for (const auto& [name, arch] : registry()) names.push_back(name);
  return names;
}

}  // namespace heed
