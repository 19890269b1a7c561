#pragma once
// The graph tasks `heed train` runs beside translation (config "task"): each owns its graph in
// the form the model reads and says what one training step minimises and how a model scores on
// a split. The loop that drives them — steps, validation, early stopping, checkpoints, metrics —
// is one for all (train/graph_trainer.hpp).
//   node-classification: the model's outputs are class logits; cross-entropy over the training
//     nodes; scored by accuracy.
//   link-prediction: the outputs are node embeddings z; an edge (i, j) scores z_i · z_j; binary
//     cross-entropy over the training edges and as many non-edges drawn anew each epoch; scored
//     by ROC AUC (and average precision) on held-out edges and sampled non-edges. Messages pass
//     along the training edges only.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "graph/graph_data.hpp"
#include "models/gat.hpp"
#include "tensor/graph_ops.hpp"

namespace heed {

// What the model reads: the features as sparse rows, and the neighbour lists of `edges` (both
// directions) with a self-loop on every node.
struct GraphInputs {
  SparseRows features;
  Csr neighbours;
  NodeFeatures input() const { return NodeFeatures{&features, Var()}; }
};
GraphInputs make_graph_inputs(const GraphData& graph, const std::vector<Edge>& edges);

enum class GraphSplit { Validation, Test };

struct GraphScores {
  double loss = 0;               // mean cross-entropy (binary for links), without weight decay
  double score = 0;              // accuracy (node classes) or ROC AUC (links)
  double average_precision = 0;  // links only
};

class GraphTask {
 public:
  virtual ~GraphTask() = default;
  virtual std::string score_name() const = 0;  // "accuracy" or "auc"
  virtual int64_t inputs() const = 0;          // features per node
  virtual int64_t outputs() const = 0;         // classes, or the embedding width
  virtual std::string describe() const = 0;    // the data, for the log
  // Forward in training mode (dropout on) and the loss to minimise, a one-element Var.
  virtual Var training_loss(Gat& model) = 0;
  // Forward in evaluation mode, scored on a split.
  virtual GraphScores evaluate(Gat& model, GraphSplit split) = 0;
};

// Reads config.data.graph and prepares config.task (link splits drawn with config.seed).
std::unique_ptr<GraphTask> make_graph_task(const Config& config);

}  // namespace heed
