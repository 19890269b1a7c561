#include "train/graph_prediction.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "config/config.hpp"
#include "io/safetensors.hpp"
#include "models/gat.hpp"
#include "train/checkpoint.hpp"
#include "train/graph_tasks.hpp"
#include "util/error.hpp"
#include "util/parse_number.hpp"

namespace heed {
namespace {

int64_t size_from(const SafeTensorFile& file, const std::string& path, const std::string& key) {
  auto it = file.metadata.find(key);
  if (it == file.metadata.end()) throw Error(path + ": no \"" + key + "\" in its metadata (not a graph model)");
  const std::optional<int64_t> value = parse_number<int64_t>(it->second);
  if (!value || *value < 0) throw Error(path + ": metadata \"" + key + "\" is not a non-negative integer");
  return *value;
}

}  // namespace

int32_t NodePredictions::predicted(int64_t node) const {
  const float* row = probabilities.data() + node * classes;
  return static_cast<int32_t>(std::max_element(row, row + classes) - row);
}

NodePredictions predict_nodes(const std::string& model_dir, const std::string& graph_dir) {
  if (!std::filesystem::is_directory(model_dir)) throw Error("model directory " + model_dir + " does not exist");
  const Config config = load_model_config(model_dir);
  if (config.task != Task::node_classification)
    throw UsageError("predict: " + model_dir + " holds a " + std::string(name_of(config.task)) +
                     " model; predict writes node classes (task node-classification)" +
                     (config.task == Task::translation ? "; use heed translate" : ""));
  const std::string weights = model_dir + "/model.safetensors";
  if (!std::filesystem::exists(weights)) throw Error(model_dir + " has no model.safetensors (training not finished?)");
  const SafeTensorFile file = read_safetensors(weights);
  const int64_t inputs = size_from(file, weights, "inputs"), outputs = size_from(file, weights, "outputs");
  // Checked before the model is built: an edited "inputs" of 2e9 would take all the memory first.
  int64_t stored = 0;
  for (const auto& [name, tensor] : file.tensors) stored += tensor.element_count();
  const int64_t described = gat_parameter_count(config.model, inputs, outputs);
  if (described != stored)
    throw Error(weights + ": its metadata (inputs " + std::to_string(inputs) + ", outputs " + std::to_string(outputs) +
                ") and config.json describe a model of " + std::to_string(described) + " parameters, the file holds " +
                std::to_string(stored) + " values");

  GraphReadOptions options;
  options.labels_and_splits = false;
  options.normalize_features = config.data.normalize_features;
  const std::string graph_read = graph_dir.empty() ? config.data.graph : graph_dir;
  GraphData graph = read_graph(graph_read, options);
  if (graph.features > inputs)
    throw Error("the graph has " + std::to_string(graph.features) + " feature columns, the model reads " +
                std::to_string(inputs));
  graph.features = inputs;  // columns the graph never uses are zero
  const GraphInputs in = make_graph_inputs(graph, graph.edges);

  Gat model(config.model, inputs, outputs, config.seed);
  load_parameters(weights, model.parameters());
  NoGradGuard no_grad;
  const Tensor logits = model.forward(in.input(), in.neighbours).value();

  NodePredictions p;
  p.graph_dir = graph_read;
  p.nodes = graph.nodes;
  p.classes = outputs;
  p.probabilities.resize(graph.nodes * outputs);
  for (int64_t i = 0; i < graph.nodes; ++i) {
    const float* row = logits.data() + i * outputs;
    const float top = *std::max_element(row, row + outputs);
    double total = 0;
    for (int64_t c = 0; c < outputs; ++c) total += std::exp(double(row[c]) - top);
    for (int64_t c = 0; c < outputs; ++c)
      p.probabilities[i * outputs + c] = static_cast<float>(std::exp(double(row[c]) - top) / total);
  }
  return p;
}

}  // namespace heed
