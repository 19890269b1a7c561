#include "models/gat.hpp"

#include <limits>
#include <string>

#include "tensor/ops.hpp"
#include "util/error.hpp"

namespace heed {
namespace {

// [N, H, F] → [N, F]: the mean of the heads.
Var mean_of_heads(const Var& y) {
  const int64_t N = y.dim(0), H = y.dim(1), F = y.dim(2);
  if (H == 1) return reshape(y, {N, F});
  auto heads = split(y, std::vector<int64_t>(H, 1), 1);
  Var total = heads[0];
  for (int64_t h = 1; h < H; ++h) total = add(total, heads[h]);
  return reshape(scale(total, 1.f / static_cast<float>(H)), {N, F});
}

// (heads, features) of layer l of L.
std::pair<int64_t, int64_t> layer_shape(const GatConfig& c, int l, int64_t outputs) {
  return l + 1 < c.layers ? std::pair<int64_t, int64_t>{c.heads, c.hidden}
                          : std::pair<int64_t, int64_t>{c.output_heads, outputs};
}

}  // namespace

Gat::Gat(const ModelConfig& config, int64_t inputs, int64_t outputs, uint64_t seed)
    : c_(config.gat), dropout_(config.dropout), outputs_(outputs), rng_(seed) {
  if (c_.layers < 1) throw UsageError("model.gat.layers must be at least 1");
  if (inputs < 1 || outputs < 1)
    throw Error("gat: a model from " + std::to_string(inputs) + " features to " + std::to_string(outputs) + " outputs");
  Rng init(seed);
  int64_t in = inputs;
  for (int l = 0; l < c_.layers; ++l) {
    const auto [heads, features] = layer_shape(c_, l, outputs);
    layers_.emplace_back(params_, "layer" + std::to_string(l + 1), in, features, heads, init);
    in = heads * features;
  }
  // Dropout draws come from their own stream: seeded like the initialisation, but a different
  // generator, so the masks do not repeat the initial weights' numbers.
  rng_.set_state(splitmix64(seed), 0);
}

Var Gat::forward(const NodeFeatures& x, const Csr& neighbours) {
  GraphAttentionLayer::Settings settings;
  settings.input_dropout = training_ ? dropout_ : 0.f;
  settings.attention_dropout = training_ ? c_.attention_dropout : 0.f;
  settings.negative_slope = c_.negative_slope;
  NodeFeatures input = x;
  for (size_t l = 0;; ++l) {
    Var y = layers_[l](input, neighbours, settings, rng_);  // [N, H, F]
    if (l + 1 == layers_.size()) return mean_of_heads(y);
    input = NodeFeatures{nullptr, reshape(elu(y), {y.dim(0), y.dim(1) * y.dim(2)})};  // heads side by side
  }
}

int64_t gat_parameter_count(const ModelConfig& config, int64_t inputs, int64_t outputs) {
  // In double, saturating: sizes read from a graph's files may multiply past 2^63.
  double n = 0, in = static_cast<double>(inputs);
  for (int l = 0; l < config.gat.layers; ++l) {
    const auto [heads, features] = layer_shape(config.gat, l, outputs);
    n += static_cast<double>(heads) * (in * static_cast<double>(features) + 3.0 * static_cast<double>(features) + 2);
    in = static_cast<double>(heads) * static_cast<double>(features);
  }
  return n >= 0x1p63 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(n);
}

}  // namespace heed
