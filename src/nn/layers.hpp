#pragma once
// Layers with parameters, thin wrappers over ops that own their Vars and names.
#include <cmath>
#include <string>
#include <utility>

#include "nn/parameters.hpp"
#include "tensor/ops.hpp"
#include "util/error.hpp"

namespace heed {

// y = x Wᵀ + b, W stored [out, in]; initialised like torch.nn.Linear: U(±1/√in).
struct Linear {
  Var weight, bias;
  Linear() = default;
  Linear(ParameterSet& params, const std::string& name, int64_t in, int64_t out, bool with_bias, Rng& rng) {
    const float bound = 1.f / std::sqrt(static_cast<float>(in));
    weight = params.add(name + ".weight", uniform_tensor({out, in}, bound, rng));
    if (with_bias) bias = params.add(name + ".bias", uniform_tensor({out}, bound, rng));
  }
  Var operator()(const Var& x) const { return linear(x, weight, bias); }
};

// Xavier-uniform weight, zero bias (the Transformer reference initialises its layers this way).
inline Linear xavier_linear(ParameterSet& params, const std::string& name, int64_t in, int64_t out, Rng& rng) {
  Linear l;
  l.weight = params.add(name + ".weight", xavier_uniform_tensor({out, in}, rng));
  l.bias = params.add(name + ".bias", Tensor::zeros({out}));
  return l;
}

// Layer normalisation over the last axis, γ = 1 and β = 0 initially, ε = 1e-5 (PyTorch's).
struct LayerNorm {
  Var weight, bias;
  LayerNorm() = default;
  LayerNorm(ParameterSet& params, const std::string& name, int64_t dim)
      : weight(params.add(name + ".weight", Tensor::full({dim}, 1.f))),
        bias(params.add(name + ".bias", Tensor::zeros({dim}))) {}
  Var operator()(const Var& x) const { return layer_norm(x, weight, bias, 1e-5f); }
};

// Rows of a [vocab, dim] table.
struct Embedding {
  Var weight;
  Embedding() = default;
  Embedding(ParameterSet& params, const std::string& name, int64_t vocab, int64_t dim, Rng& rng)
      : weight(
            params.add(name + ".weight", normal_tensor({vocab, dim}, 1.f / std::sqrt(static_cast<float>(dim)), rng))) {}
  Var operator()(const std::vector<int32_t>& ids, const Shape& ids_shape) const {
    return embedding(weight, ids, ids_shape);
  }
};

// A translation model's source and target embeddings ("src_emb", "tgt_emb"), drawn in that
// order. With `shared`, one matrix under both names (model.share_embeddings: one joint vocabulary).
inline std::pair<Embedding, Embedding> source_target_embeddings(ParameterSet& params, int64_t src_vocab,
                                                                int64_t tgt_vocab, int64_t dim, bool shared, Rng& rng) {
  Embedding src(params, "src_emb", src_vocab, dim, rng);
  if (!shared) return {src, Embedding(params, "tgt_emb", tgt_vocab, dim, rng)};
  if (src_vocab != tgt_vocab) throw UsageError("model.share_embeddings needs one joint vocabulary");
  params.alias("tgt_emb.weight", "src_emb.weight");
  return {src, src};
}

// The four tensors of one GRU direction (PyTorch names and layout: gates r, z, n stacked).
struct GruWeights {
  Var weight_ih, weight_hh, bias_ih, bias_hh;
  GruWeights() = default;
  // suffix: "_l0", "_l0_reverse" (nn.GRU) or "" (nn.GRUCell)
  GruWeights(ParameterSet& params, const std::string& prefix, const std::string& suffix, int64_t in, int64_t hidden,
             Rng& rng) {
    const float bound = 1.f / std::sqrt(static_cast<float>(hidden));
    weight_ih = params.add(prefix + ".weight_ih" + suffix, uniform_tensor({3 * hidden, in}, bound, rng));
    weight_hh = params.add(prefix + ".weight_hh" + suffix, uniform_tensor({3 * hidden, hidden}, bound, rng));
    bias_ih = params.add(prefix + ".bias_ih" + suffix, uniform_tensor({3 * hidden}, bound, rng));
    bias_hh = params.add(prefix + ".bias_hh" + suffix, uniform_tensor({3 * hidden}, bound, rng));
  }
};

}  // namespace heed
