#pragma once
// Applying a trained node-classification model to every node of a graph (`heed predict`).
#include <cstdint>
#include <string>
#include <vector>

namespace heed {

struct NodePredictions {
  int64_t nodes = 0, classes = 0;
  std::vector<float> probabilities;       // [nodes, classes], each row sums to 1
  std::string graph_dir;                  // the graph read
  int32_t predicted(int64_t node) const;  // the most probable class (the lowest on a tie)
};

// The model in model_dir (config.json, model.safetensors) on the graph in graph_dir ("" = the
// one it was trained on, data.graph). The graph needs features.txt and edges.txt only.
NodePredictions predict_nodes(const std::string& model_dir, const std::string& graph_dir);

}  // namespace heed
