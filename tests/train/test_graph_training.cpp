// Training on graphs end to end (train/graph_trainer): a synthetic two-community graph learned to
// >= 95 % test accuracy in a few seconds; the model directory it leaves; a run cut in two and
// resumed equal to the uninterrupted run, bit for bit; link prediction ranking held-out edges
// above non-edges.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "../graph/graph_fixture.hpp"
#include "../temp_dir.hpp"
#include "io/safetensors.hpp"
#include "train/graph_trainer.hpp"

using namespace heed;
using heed::test::TempDir;

namespace {

// train_graph_model on `config` into `dir`, resuming a run there when `resume`.
GraphTrainSummary train_in(Config config, const std::filesystem::path& dir, bool resume) {
  config.model_dir = dir.string();
  config.training.resume = resume;
  return train_graph_model(config);
}

Config community_config(const std::string& graph, Task task = Task::node_classification) {
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

size_t lines_of(const std::string& path) {
  std::ifstream in(path);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

}  // namespace

TEST_CASE("node classification learns a two-community graph to >= 95 % test accuracy in seconds", "[gat]") {
  TempDir d("graph-train");
  heed::test::write_communities(d.path / "graph");
  const Config c = community_config((d.path / "graph").string());
  const auto start = std::chrono::steady_clock::now();
  const GraphTrainSummary s = train_in(c, d / "model", false);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO("test accuracy " << s.test.score << ", validation " << s.validation.score << ", " << s.epochs << " epochs, "
                        << seconds << " s");
  CHECK(s.test.score >= 0.95);
  CHECK(s.validation.score >= 0.9);
  CHECK(seconds < 20);
  CHECK(s.score_name == "accuracy");
  CHECK(s.best_epoch <= s.epochs);
  for (const char* file : {"config.json", "model.safetensors", "trainer_state.safetensors", "metrics.jsonl"})
    CHECK(std::filesystem::exists(d.path / "model" / file));
  CHECK(lines_of(d / "model/metrics.jsonl") == static_cast<size_t>(s.epochs) + 1);  // an epoch each, then the test
  const SafeTensorFile model = read_safetensors(d / "model/model.safetensors");
  CHECK(model.metadata.at("task") == "node-classification");
  CHECK(model.metadata.at("outputs") == "2");
  CHECK(model.metadata.at("epoch") == std::to_string(s.best_epoch));
}

TEST_CASE("a graph run stopped and resumed equals the run without a stop, bit for bit", "[gat]") {
  TempDir d("graph-resume");
  heed::test::write_communities(d.path / "graph");
  Config c = community_config((d.path / "graph").string());
  c.training.patience = 0;
  c.training.max_epochs = 24;
  const GraphTrainSummary whole = train_in(c, d / "whole", false);
  c.training.max_epochs = 10;
  train_in(c, d / "split", false);
  c.training.max_epochs = 24;
  const GraphTrainSummary resumed = train_in(c, d / "split", true);
  CHECK(resumed.epochs == whole.epochs);
  CHECK(resumed.best_epoch == whole.best_epoch);
  CHECK(resumed.test.score == whole.test.score);
  const SafeTensorFile a = read_safetensors(d / "whole/trainer_state.safetensors");
  const SafeTensorFile b = read_safetensors(d / "split/trainer_state.safetensors");
  REQUIRE(a.tensors.size() == b.tensors.size());
  for (const auto& [name, t] : a.tensors) {
    INFO(name);
    CHECK(t.data == b.tensors.at(name).data);  // parameters, Adam moments, kept parameters
  }
  CHECK(read_safetensors(d / "whole/model.safetensors").tensors.at("layer1.W").data ==
        read_safetensors(d / "split/model.safetensors").tensors.at("layer1.W").data);
  CHECK(lines_of(d / "split/metrics.jsonl") ==
        lines_of(d / "whole/metrics.jsonl") + 1);  // the first run's test record too
}

TEST_CASE("link prediction ranks held-out edges above sampled non-edges", "[gat]") {
  TempDir d("graph-links");
  heed::test::write_communities(d.path / "graph", 300, 20, 0.3, 0.003);
  Config c = community_config((d.path / "graph").string(), Task::link_prediction);
  c.model.dropout = 0;
  c.model.gat.attention_dropout = 0;
  c.model.gat.embedding_dim = 16;
  c.training.patience = 50;
  const GraphTrainSummary s = train_in(c, d / "model", false);
  INFO("test AUC " << s.test.score << ", AP " << s.test.average_precision << ", validation AUC " << s.validation.score
                   << ", " << s.epochs << " epochs");
  CHECK(s.score_name == "auc");
  CHECK(s.test.score >= 0.8);
  CHECK(s.test.average_precision >= 0.75);
}

TEST_CASE("graph training refuses a config that never stops, and a used directory", "[gat]") {
  TempDir d("graph-refusals");
  heed::test::write_communities(d.path / "graph");
  Config c = community_config((d.path / "graph").string());
  c.training.patience = 0;
  c.training.max_epochs = 0;
  CHECK_THROWS_WITH(train_in(c, d / "model", false), Catch::Contains("training never stops"));
  c.training.max_epochs = 2;
  train_in(c, d / "model", false);
  CHECK_THROWS_WITH(train_in(c, d / "model", false), Catch::Contains("already holds a training run"));
  CHECK_THROWS_WITH(train_in(c, d / "other", true), Catch::Contains("no trainer_state.safetensors"));
}
