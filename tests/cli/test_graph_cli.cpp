// `heed train` on graph tasks and `heed predict`, run as the real executable on a synthetic
// two-community graph: the result line, a class for every node (with probabilities on request),
// --resume (the count of skipped updates too), and one-line errors with the right exit code for bad graph files, a
// graph task with the wrong architecture, and a model that is not a node classifier.
#include <catch2/catch.hpp>

#include <sstream>

#include "../graph/graph_fixture.hpp"
#include "io/safetensors.hpp"
#include "skip_count_resume.hpp"
#include "train_fixture.hpp"

using namespace heed::test;

namespace {

std::string write_graph_config(const std::string& dir, const std::string& graph, int max_epochs) {
  const nlohmann::json c = {
      {"task", "node-classification"},
      {"seed", 2},
      {"model",
       {{"arch", "gat"}, {"dropout", 0.3}, {"gat", {{"hidden", 8}, {"heads", 4}, {"attention_dropout", 0.3}}}}},
      {"data", {{"graph", graph}}},
      {"training",
       {{"learning_rate", 0.01},
        {"clip_norm", 0},
        {"label_smoothing", 0},
        {"max_epochs", max_epochs},
        {"patience", 0},
        {"validate_every", 5},
        {"log_every", 10}}}};
  const std::string path = dir + "/graph-config.json";
  std::ofstream(path) << c.dump(2);
  return path;
}

std::vector<std::vector<std::string>> fields_of_lines(const std::string& text) {
  std::vector<std::vector<std::string>> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    out.emplace_back();
    for (std::string w; words >> w;) out.back().push_back(w);
  }
  return out;
}

}  // namespace

TEST_CASE("heed train (node classification), then heed predict: a class for every node", "[gat][cli]") {
  TempDir dir("graph-cli");
  const std::string graph = dir / "graph", model = dir / "model";
  write_communities(graph);
  const std::string config = write_graph_config(dir.path.string(), graph, 60);
  Result r = run(kHeed + " --threads 1 train -c " + config + " -m " + model, dir / "train");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Matches("test accuracy [0-9.]+ %, validation accuracy [0-9.]+ % \\(kept epoch [0-9]+ of 60, "
                                   "stopped by max_epochs; [0-9.]+ ms per training epoch\\)\n"));

  r = run(kHeed + " --threads 1 predict -m " + model + " -o " + (dir / "labels.txt"), dir / "predict");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto predicted = fields_of_lines(slurp(dir / "labels.txt"));
  const auto truth = fields_of_lines(slurp(graph + "/labels.txt"));
  REQUIRE(predicted.size() == 200);
  int agree = 0;
  for (size_t i = 0; i < predicted.size(); ++i) {
    REQUIRE(predicted[i].size() == 1);
    agree += predicted[i][0] == truth[i][0];
  }
  CHECK(agree >= 180);  // the communities are learned (the test split alone reaches >= 95 %)

  r = run(kHeed + " --threads 1 predict -m " + model + " --probabilities", dir / "probabilities");
  REQUIRE(r.exit_code == 0);
  const auto rows = fields_of_lines(r.out);
  REQUIRE(rows.size() == 200);
  for (size_t i = 0; i < rows.size(); ++i) {
    REQUIRE(rows[i].size() == 3);  // class, then one probability per class
    const double p0 = std::stod(rows[i][1]), p1 = std::stod(rows[i][2]);
    CHECK(p0 + p1 == Approx(1.0).margin(2e-6));
    CHECK(rows[i][0] == (p1 > p0 ? "1" : "0"));
    CHECK(rows[i][0] == predicted[i][0]);
  }

  // --resume continues the run to a larger limit
  r = run(kHeed + " --threads 1 train --resume -m " + model + " --set training.max_epochs=70", dir / "resume");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains(" of 70, stopped by max_epochs"));
}

TEST_CASE("heed train and predict on graphs: bad input is one error line, nothing half written", "[gat][cli]") {
  TempDir dir("graph-cli-errors");
  const std::string graph = dir / "graph";
  write_communities(graph);
  const std::string config = write_graph_config(dir.path.string(), graph, 3);

  write_text(std::filesystem::path(graph) / "edges.txt", "0 1\n1 200\n");
  Result r = run(kHeed + " --threads 1 train -c " + config + " -m " + (dir / "model"), dir / "bad-edges");
  CHECK(r.exit_code == 1);
  CHECK(r.err ==
        "heed: error: " + graph + "/edges.txt:2: node id 200 out of range (the graph has 200 nodes, 0 … 199)\n");
  for (const auto& e : std::filesystem::directory_iterator(dir / "model"))  // the run lock only
    CHECK(e.path().filename() == "train.lock");

  // Features from which no model can be made, or none that fits in memory, before anything is written.
  write_communities(graph);
  std::string features = slurp(graph + "/features.txt");
  std::string no_features;
  for (size_t n = 0; n < 200; ++n) no_features += " | \n";
  write_text(std::filesystem::path(graph) / "features.txt", no_features);
  r = run(kHeed + " --threads 1 train -c " + config + " -m " + (dir / "model"), dir / "no-features");
  CHECK(r.exit_code == 1);
  CHECK(r.err == "heed: error: " + graph + "/features.txt: no node has a feature (every line is ' | ')\n");
  write_text(std::filesystem::path(graph) / "features.txt",
             "2000000000 | 1\n" + features.substr(features.find('\n') + 1));
  r = run(kHeed + " --threads 1 train -c " + config + " -m " + (dir / "model"), dir / "huge-features");
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::StartsWith("heed: error: the model would have 6.4e+10 parameters, 954 GiB to train"));
  CHECK_THAT(r.err, Catch::Contains("the graph gives 2000000001 input features and 2 outputs"));
  for (const auto& e : std::filesystem::directory_iterator(dir / "model"))  // the run lock only
    CHECK(e.path().filename() == "train.lock");

  write_communities(graph);
  r = run(kHeed + " --threads 1 train -c " + config + " -m " + (dir / "model") + " --set model.arch=transformer",
          dir / "arch");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("task node-classification needs model.arch = gat (got transformer)"));

  REQUIRE(run(kHeed + " --threads 1 train -c " + config + " -m " + (dir / "model"), dir / "train").exit_code == 0);
  const std::string labels = slurp(graph + "/labels.txt");  // an output over a file predict reads
  r = run(kHeed + " --threads 1 predict -m " + (dir / "model") + " -o " + graph + "/labels.txt", dir / "over-input");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("is also the input"));
  CHECK(slurp(graph + "/labels.txt") == labels);
  write_text(std::filesystem::path(graph) / "features.txt", "0 1 | 1\n");
  r = run(kHeed + " --threads 1 predict -m " + (dir / "model") + " -o " + (dir / "labels.txt"), dir / "bad-features");
  CHECK(r.exit_code == 1);
  CHECK(r.err == "heed: error: " + graph + "/features.txt:1: 2 feature columns but 1 values\n");
  CHECK(!std::filesystem::exists(dir / "labels.txt"));

  // A model file whose metadata was edited to a huge input size is refused before the model is built.
  std::filesystem::create_directories(dir / "edited");
  std::filesystem::copy_file(dir / "model/config.json", dir / "edited/config.json");
  heed::SafeTensorFile weights = heed::read_safetensors(dir / "model/model.safetensors");
  weights.metadata["inputs"] = "2000000000";
  heed::write_safetensors(dir / "edited/model.safetensors", weights);
  r = run(kHeed + " --threads 1 predict -m " + (dir / "edited") + " -o " + (dir / "labels.txt"), dir / "edited-inputs");
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Equals("heed: error: " + (dir / "edited/model.safetensors") +
                                  ": its metadata (inputs 2000000000, outputs 2) and config.json describe a model "
                                  "of 64000000176 parameters, the file holds 1136 values\n"));
  CHECK(!std::filesystem::exists(dir / "labels.txt"));

  // A resume on another graph (45 features, 3 classes) fails on the trainer state, changing nothing.
  const std::string other = dir / "other-graph";
  write_communities(other, 200, 3);
  const std::string trained_config = slurp(dir / "model/config.json");
  r = run(kHeed + " --threads 1 train --resume -m " + (dir / "model") + " --set data.graph=" + other,
          dir / "other-graph-resume");
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("trainer_state.safetensors"));
  CHECK(slurp(dir / "model/config.json") == trained_config);

  std::filesystem::create_directories(dir / "translation");
  write_text(std::filesystem::path(dir / "translation") / "config.json", R"({"task": "translation"})");
  r = run(kHeed + " predict -m " + (dir / "translation"), dir / "translation-model");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err,
             Catch::Contains("holds a translation model; predict writes node classes (task node-classification); "
                             "use heed translate"));
}

TEST_CASE("heed train on graphs: updates skipped in a row are counted on across a resume", "[gat][cli]") {
  TempDir dir("graph-cli-diverge-resume");
  const std::string graph = dir / "graph", model = dir / "model";
  write_communities(graph);
  // A learning rate that overflows the parameters at the first update: every later loss is
  // non-finite and skipped, and the time budget ends the run in mid-streak.
  const std::string config = write_graph_config(dir.path.string(), graph, 0);
  const std::string settings = " --set training.learning_rate=3e38 --set training.max_bad_steps=1000000000";
  Result first = run(kHeed + " --threads 1 train -c " + config + " -m " + model + settings +
                         " --set training.max_epochs=0 --set training.max_time=1s",
                     dir / "first");
  INFO(first.err);
  // Its one epoch had a non-finite validation loss, so no parameters are kept; the state is saved.
  CHECK(first.exit_code == 1);
  CHECK_THAT(first.err, Catch::EndsWith("heed: error: training kept no parameters (no epoch had a finite validation "
                                        "loss)\n"));
  CHECK(heed::read_safetensors(model + "/trainer_state.safetensors").metadata.at("epoch") == "1");
  check_skip_count_resumes(first, model,
                           kHeed + " --threads 1 train --resume -m " + model + " --set training.max_time=10m",
                           dir / "resumed");
}
