#pragma once
// GAT (Veličković et al., ICLR 2018), as the authors' code builds it for Cora: `layers − 1`
// hidden graph attention layers (nn/graph_attention_layer.hpp; heads concatenated, then ELU) and
// an output layer whose heads are averaged, over neighbour lists that include every node itself.
// Node classification reads the outputs as class logits; link prediction as node embeddings.
// Parameters are named layer1.W, layer1.a1, …, as in the PyTorch port's state_dict.
//
// Parameters per layer of H heads from F_in to F_out features: H · (F_in·F_out + 3·F_out + 2).
#include <cstdint>
#include <vector>

#include "config/config.hpp"
#include "nn/graph_attention_layer.hpp"
#include "nn/parameters.hpp"
#include "tensor/random.hpp"

namespace heed {

class Gat {
 public:
  // inputs: feature columns; outputs: classes (node classification) or embedding width.
  Gat(const ModelConfig& config, int64_t inputs, int64_t outputs, uint64_t seed);

  // x [N, inputs] over `neighbours` (N × N lists, self-loops included) → [N, outputs]. Dropout
  // (model.dropout on each layer's input, model.gat.attention_dropout on the coefficients) only
  // in training mode, drawn from rng().
  Var forward(const NodeFeatures& x, const Csr& neighbours);

  ParameterSet& parameters() { return params_; }
  const ParameterSet& parameters() const { return params_; }
  void set_training(bool on) { training_ = on; }
  bool training() const { return training_; }
  Rng& rng() { return rng_; }  // dropout draws; saved with the trainer state
  int64_t outputs() const { return outputs_; }

 private:
  GatConfig c_;
  float dropout_;
  int64_t outputs_;
  ParameterSet params_;
  std::vector<GraphAttentionLayer> layers_;
  bool training_ = false;
  Rng rng_;
};

int64_t gat_parameter_count(const ModelConfig& config, int64_t inputs, int64_t outputs);

}  // namespace heed
