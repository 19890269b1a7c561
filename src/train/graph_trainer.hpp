#pragma once
// `heed train` for the graph tasks (node-classification, link-prediction): full-batch training
// of a GAT on the skeleton the translation trainer uses — Adam with coupled L2
// (training.weight_decay) and the learning-rate schedule, the non-finite-step guard, the trainer
// state for an exact --resume, metrics.jsonl, a model directory with config.json and
// model.safetensors. One update per epoch; every epoch is validated.
//
// Early stopping as the GAT reference code does it: an epoch counts as progress when the
// validation loss or the validation score (accuracy, AUC) is at least as good as the best seen;
// the parameters are kept when both are; training stops after training.patience epochs without
// progress (or at training.max_epochs / max_steps / max_time), and the kept parameters are
// restored, saved as model.safetensors and scored on the test split.
#include <cstdint>
#include <string>

#include "config/config.hpp"
#include "train/graph_tasks.hpp"

namespace heed {

struct GraphTrainSummary {
  Task task = Task::node_classification;
  std::string score_name;  // "accuracy" or "auc"
  int64_t epochs = 0, best_epoch = 0;
  GraphScores validation, test;   // of the restored model
  double train_ms_per_epoch = 0;  // median forward + backward + update (after 5 warm-up epochs, if more)
  std::string stop_reason;
};

// `config.model_dir` names the directory; training.resume continues a run in it.
GraphTrainSummary train_graph_model(const Config& config);

}  // namespace heed
