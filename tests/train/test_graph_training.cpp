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
#include "graph_runs.hpp"
#include "io/safetensors.hpp"
#include "train/graph_trainer.hpp"

using namespace heed;
using namespace heed::test;

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
  check_resume_is_exact(community_config((d.path / "graph").string()), d.path);
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
