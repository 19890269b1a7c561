#pragma once
// Graph training runs for the tests: a config for the synthetic two-community graph
// (tests/graph/graph_fixture.hpp), a run of it into a directory, fresh or resumed, and the check
// that a run stopped and resumed equals the run without a stop, bit for bit.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "config/config.hpp"
#include "io/safetensors.hpp"
#include "train/graph_trainer.hpp"

namespace heed::test {

// train_graph_model on `config` into `dir`, resuming a run there when `resume`.
inline GraphTrainSummary train_in(Config config, const std::filesystem::path& dir, bool resume) {
  config.model_dir = dir.string();
  config.training.resume = resume;
  return train_graph_model(config);
}

inline Config community_config(const std::string& graph, Task task = Task::node_classification) {
  Config c;
  c.task = task;
  c.seed = 3;
  c.model.arch = Arch::gat;
  c.model.dropout = 0.3f;
  c.model.gat.hidden = 8;
  c.model.gat.heads = 4;
  c.model.gat.attention_dropout = 0.3f;
  c.data.graph = graph;
  c.training.learning_rate = 0.01f;
  c.training.weight_decay = 5e-4f;
  c.training.clip_norm = 0;
  c.training.label_smoothing = 0;
  c.training.patience = 30;
  c.training.max_epochs = 100;
  c.training.validate_every = 10;
  c.training.log_every = 50;
  return c;
}

inline size_t lines_of(const std::string& path) {
  std::ifstream in(path);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

// `c` trained for 24 epochs in dir/whole, and for 10 in dir/split then resumed to 24: the same
// epochs, scores and bytes of every tensor of the trainer state and the model.
inline void check_resume_is_exact(Config c, const std::filesystem::path& dir) {
  c.training.patience = 0;
  c.training.max_epochs = 24;
  const GraphTrainSummary whole = train_in(c, dir / "whole", false);
  c.training.max_epochs = 10;
  train_in(c, dir / "split", false);
  c.training.max_epochs = 24;
  const GraphTrainSummary resumed = train_in(c, dir / "split", true);
  CHECK(resumed.epochs == whole.epochs);
  CHECK(resumed.best_epoch == whole.best_epoch);
  CHECK(resumed.test.score == whole.test.score);
  const SafeTensorFile a = read_safetensors((dir / "whole/trainer_state.safetensors").string());
  const SafeTensorFile b = read_safetensors((dir / "split/trainer_state.safetensors").string());
  REQUIRE(a.tensors.size() == b.tensors.size());
  for (const auto& [name, t] : a.tensors) {
    INFO(name);
    CHECK(t.data == b.tensors.at(name).data);  // parameters, Adam moments, kept parameters
  }
  CHECK(read_safetensors((dir / "whole/model.safetensors").string()).tensors.at("layer1.W").data ==
        read_safetensors((dir / "split/model.safetensors").string()).tensors.at("layer1.W").data);
  CHECK(lines_of((dir / "split/metrics.jsonl").string()) ==
        lines_of((dir / "whole/metrics.jsonl").string()) + 1);  // the first run's test record too
}

}  // namespace heed::test
