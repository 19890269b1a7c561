#include "train/graph_tasks.hpp"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cmath>

#include "graph/link_split.hpp"
#include "metrics/ranking.hpp"
#include "tensor/ops.hpp"
#include "train/memory_check.hpp"
#include "util/error.hpp"

namespace heed {
namespace {

// Restores a model's mode after an evaluation.
class EvaluationMode {
 public:
  explicit EvaluationMode(Gat& model) : model_(model), was_training_(model.training()) { model_.set_training(false); }
  ~EvaluationMode() { model_.set_training(was_training_); }
  EvaluationMode(const EvaluationMode&) = delete;
  EvaluationMode& operator=(const EvaluationMode&) = delete;

 private:
  Gat& model_;
  bool was_training_;
};

class NodeClassification : public GraphTask {
 public:
  NodeClassification(GraphData graph, const Config& config)
      : graph_(std::move(graph)),
        inputs_(make_graph_inputs(graph_, graph_.edges)),
        label_smoothing_(config.training.label_smoothing) {
    for (int32_t i : graph_.train) train_labels_.push_back(graph_.labels[i]);
  }
  std::string score_name() const override { return "accuracy"; }
  int64_t inputs() const override { return graph_.features; }
  int64_t outputs() const override { return graph_.classes; }
  std::string describe() const override {
    return fmt::format("{} nodes, {} features, {} classes, {} undirected edges; split {}/{}/{}", graph_.nodes,
                       graph_.features, graph_.classes, graph_.edges.size(), graph_.train.size(), graph_.val.size(),
                       graph_.test.size());
  }

  Var training_loss(Gat& model) override {
    model.set_training(true);
    Var logits = model.forward(inputs_.input(), inputs_.neighbours);
    const auto n = static_cast<int64_t>(graph_.train.size());
    return cross_entropy(embedding(logits, graph_.train, {n}), train_labels_, -1, label_smoothing_,
                         static_cast<float>(n));
  }

  GraphScores evaluate(Gat& model, GraphSplit split) override {
    EvaluationMode eval(model);
    NoGradGuard no_grad;
    const Tensor logits = model.forward(inputs_.input(), inputs_.neighbours).value();
    const std::vector<int32_t>& nodes = split == GraphSplit::Validation ? graph_.val : graph_.test;
    const int64_t C = logits.dim(1);
    GraphScores s;
    int64_t correct = 0;
    for (int32_t i : nodes) {
      const float* row = logits.data() + int64_t{i} * C;
      const int64_t best = std::max_element(row, row + C) - row;
      double total = 0;
      for (int64_t c = 0; c < C; ++c) total += std::exp(double(row[c]) - row[best]);
      s.loss += std::log(total) + row[best] - row[graph_.labels[i]];
      correct += best == graph_.labels[i];
    }
    s.loss /= static_cast<double>(nodes.size());
    s.score = static_cast<double>(correct) / static_cast<double>(nodes.size());
    return s;
  }

 private:
  GraphData graph_;
  GraphInputs inputs_;
  std::vector<int32_t> train_labels_;
  float label_smoothing_;
};

// z_i · z_j for each pair → [P, 2] logits (0, z_i · z_j): the binary cross-entropy as a two-class
// softmax, σ(s) = softmax(0, s)₁.
Var pair_logits(const Var& z, const std::vector<Edge>& pairs) {
  const auto P = static_cast<int64_t>(pairs.size());
  const int64_t D = z.dim(1);
  std::vector<int32_t> first(P), second(P);
  for (int64_t k = 0; k < P; ++k) std::tie(first[k], second[k]) = pairs[k];
  Var products = mul(embedding(z, first, {P}), embedding(z, second, {P}));  // [P, D]
  Var scores = matmul(products, Var(Tensor::full({D, 1}, 1.f)));            // [P, 1]
  return concat({Var(Tensor::zeros({P, 1})), scores}, 1);
}

class LinkPrediction : public GraphTask {
 public:
  LinkPrediction(GraphData graph, const Config& config)
      : graph_(std::move(graph)),
        split_(split_links(graph_, config.data.val_edges, config.data.test_edges, config.seed)),
        inputs_(make_graph_inputs(graph_, split_.train)),
        outputs_(config.model.gat.embedding_dim) {}
  std::string score_name() const override { return "auc"; }
  int64_t inputs() const override { return graph_.features; }
  int64_t outputs() const override { return outputs_; }
  std::string describe() const override {
    return fmt::format(
        "{} nodes, {} features, {} undirected edges: {} for training, {} + {} non-edges validation, "
        "{} + {} test",
        graph_.nodes, graph_.features, graph_.edges.size(), split_.train.size(), split_.val.size(),
        split_.val_negative.size(), split_.test.size(), split_.test_negative.size());
  }

  Var training_loss(Gat& model) override {
    model.set_training(true);
    Var z = model.forward(inputs_.input(), inputs_.neighbours);
    // Non-edges of the training graph, as many as its edges, drawn from the model's generator
    // (saved with the trainer state): held-out edges may come up, their existence is not known.
    std::vector<Edge> pairs = split_.train;
    const auto negatives = sample_non_edges(graph_.nodes, split_.train, {}, static_cast<int64_t>(split_.train.size()),
                                            [&] { return model.rng().next_u64(); });
    pairs.insert(pairs.end(), negatives.begin(), negatives.end());
    std::vector<int32_t> labels(pairs.size(), 0);
    std::fill(labels.begin(), labels.begin() + static_cast<int64_t>(split_.train.size()), 1);
    return cross_entropy(pair_logits(z, pairs), labels, -1, 0.f, static_cast<float>(pairs.size()));
  }

  GraphScores evaluate(Gat& model, GraphSplit split) override {
    EvaluationMode eval(model);
    NoGradGuard no_grad;
    Var z = model.forward(inputs_.input(), inputs_.neighbours);
    const bool val = split == GraphSplit::Validation;
    std::vector<Edge> pairs = val ? split_.val : split_.test;
    const auto& negatives = val ? split_.val_negative : split_.test_negative;
    const size_t positives = pairs.size();
    pairs.insert(pairs.end(), negatives.begin(), negatives.end());
    const Tensor logits = pair_logits(z, pairs).value();
    std::vector<float> scores(pairs.size());
    std::vector<bool> is_edge(pairs.size());
    GraphScores s;
    for (size_t k = 0; k < pairs.size(); ++k) {
      const double x = logits.data()[2 * k + 1];
      scores[k] = static_cast<float>(x);
      is_edge[k] = k < positives;
      // −log σ(x) for an edge, −log(1 − σ(x)) for a non-edge, without overflow
      const double m = is_edge[k] ? -x : x;
      s.loss += std::max(m, 0.0) + std::log1p(std::exp(-std::fabs(m)));
    }
    s.loss /= static_cast<double>(pairs.size());
    s.score = roc_auc(scores, is_edge);
    s.average_precision = average_precision(scores, is_edge);
    return s;
  }

 private:
  GraphData graph_;
  LinkSplit split_;
  GraphInputs inputs_;
  int64_t outputs_;
};

}  // namespace

GraphInputs make_graph_inputs(const GraphData& graph, const std::vector<Edge>& edges) {
  GraphInputs in;
  std::vector<std::pair<int32_t, int32_t>> entries;
  entries.reserve(graph.feature_columns.size());
  for (int64_t i = 0; i < graph.nodes; ++i)
    for (int64_t k = graph.feature_offsets[i]; k < graph.feature_offsets[i + 1]; ++k)
      entries.emplace_back(static_cast<int32_t>(i), graph.feature_columns[k]);
  in.features.pattern = make_csr(graph.nodes, graph.features, std::move(entries));
  // make_csr keeps each row's entries in column order, as features.txt lists them.
  in.features.values = graph.feature_values;
  std::vector<std::pair<int32_t, int32_t>> links;
  links.reserve(2 * edges.size() + graph.nodes);
  for (const auto& [a, b] : edges) links.insert(links.end(), {{a, b}, {b, a}});
  for (int32_t i = 0; i < graph.nodes; ++i) links.emplace_back(i, i);
  in.neighbours = make_csr(graph.nodes, graph.nodes, std::move(links));
  return in;
}

std::unique_ptr<GraphTask> make_graph_task(const Config& config) {
  const bool nodes = config.task == Task::node_classification;
  if (!nodes && config.task != Task::link_prediction)
    throw UsageError("task " + std::string(name_of(config.task)) + " is not a graph task");
  GraphReadOptions options;
  options.labels_and_splits = nodes;
  options.normalize_features = config.data.normalize_features;
  GraphData graph = read_graph(config.data.graph, options);
  // Before the inputs are made: their column index is as long as the features (a column of 2e9
  // in a small graph's features.txt would take gigabytes before the model's weights did).
  const int64_t outputs = nodes ? graph.classes : config.model.gat.embedding_dim;
  const GatConfig& gat = config.model.gat;
  check_trainable(static_cast<double>(gat_parameter_count(config.model, graph.features, outputs)),
                  "the graph gives " + std::to_string(graph.features) + " input features and " +
                      std::to_string(outputs) + " outputs (features.txt's largest column + 1, or meta.json), " +
                      "model.gat " + std::to_string(gat.layers) + " layers of " + std::to_string(gat.heads) + " × " +
                      std::to_string(gat.hidden));
  if (nodes) return std::make_unique<NodeClassification>(std::move(graph), config);
  return std::make_unique<LinkPrediction>(std::move(graph), config);
}

}  // namespace heed
