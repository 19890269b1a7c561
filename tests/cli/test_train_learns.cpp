// A short end-to-end run: `heed train` on a tiny reversal corpus lowers the training loss and the
// dev loss, logs valid metrics.jsonl records, keeps the best model by dev BLEU, and the model
// directory it writes translates; curves.svg and `heed plot` draw the run.
#include <catch2/catch.hpp>

#include "io/safetensors.hpp"
#include "train/average.hpp"
#include "train_fixture.hpp"

using namespace heed;
using namespace heed::test;

TEST_CASE("heed train: a short run's loss falls and its model directory translates") {
  TempDir dir("train-learns");
  write_reverse_corpus(dir.path.string(), "train", 300, 21);
  write_reverse_corpus(dir.path.string(), "dev", 20, 22);
  const std::string config = write_tiny_config(dir.path.string(),
                                               {{"max_steps", 150},
                                                {"validate_every", 50},
                                                {"log_every", 10},
                                                {"validation_metric", "bleu"},
                                                {"learning_rate", 0.02}},
                                               /*with_dev=*/true);
  const std::string model = dir / "model";
  Result r = run(kHeed + " --threads 1 train -c " + config + " -m " + model, dir / "train");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);

  std::vector<double> train_loss, dev_loss, dev_bleu;
  std::vector<int64_t> valid_steps;
  int64_t best_step = -1;
  double best_bleu = -1;
  std::ifstream metrics(model + "/metrics.jsonl");
  for (std::string line; std::getline(metrics, line);) {
    INFO(line);
    const auto j = nlohmann::json::parse(line);
    if (j.at("type") == "train") {
      train_loss.push_back(j.at("loss").get<double>());
    } else {
      REQUIRE(j.at("type") == "valid");
      for (const char* field : {"step", "loss", "nll", "ppl", "elapsed", "best", "bleu"}) CHECK(j.contains(field));
      dev_loss.push_back(j.at("loss").get<double>());
      dev_bleu.push_back(j.at("bleu").get<double>());
      valid_steps.push_back(j.at("step").get<int64_t>());
      if (j.at("best").get<bool>()) {
        CHECK(dev_bleu.back() > best_bleu);
        best_bleu = dev_bleu.back();
        best_step = valid_steps.back();
      }
    }
  }
  REQUIRE(train_loss.size() == 15);
  CHECK(valid_steps == std::vector<int64_t>{50, 100, 150});
  INFO("train loss first " << train_loss.front() << " last " << train_loss.back());
  CHECK(train_loss.back() < 0.8 * train_loss.front());
  CHECK(dev_loss.back() < dev_loss.front());
  // model.safetensors is the best checkpoint by dev BLEU
  CHECK(read_safetensors(model + "/model.safetensors").metadata.at("step") == std::to_string(best_step));

  for (const char* file : {"config.json", "tokenizer.json", "model.safetensors", "trainer_state.safetensors"})
    CHECK(fs::exists(model + "/" + file));
  // curves.svg, redrawn at every validation, names the run and its best dev BLEU; `heed plot`
  // draws the same picture from metrics.jsonl.
  const std::string curves = slurp(model + "/curves.svg");
  CHECK(curves.rfind("<svg ", 0) == 0);
  char best[80];
  std::snprintf(best, sizeof best, "model: best dev BLEU %.2f at update %lld", best_bleu, static_cast<long long>(best_step));
  CHECK(curves.find(best) != std::string::npos);
  Result p = run(kHeed + " plot " + model + " -o " + (dir / "plot.svg"), dir / "plot");
  INFO(p.err);
  CHECK(p.exit_code == 0);
  CHECK(slurp(dir / "plot.svg") == curves);
  Result missing = run(kHeed + " plot " + (dir / "absent") + " -o " + (dir / "absent.svg"), dir / "plot-missing");
  CHECK(missing.exit_code == 1);
  CHECK(missing.err.find((dir / "absent") + "/metrics.jsonl") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "absent.svg"));
  Result t =
      run("head -n 3 " + (dir / "dev.src") + " | " + kHeed + " --threads 1 translate -m " + model, dir / "translate");
  INFO(t.err);
  CHECK(t.exit_code == 0);
  CHECK(std::count(t.out.begin(), t.out.end(), '\n') == 3);
}

TEST_CASE("heed train: training.average_last validates the mean of the last checkpoints, kept only when better") {
  TempDir dir("train-average-last");
  write_reverse_corpus(dir.path.string(), "train", 300, 21);
  write_reverse_corpus(dir.path.string(), "dev", 20, 22);
  const std::string config = write_tiny_config(
      dir.path.string(),
      {{"max_steps", 60}, {"validate_every", 20}, {"keep_last", 3}, {"average_last", 3}, {"learning_rate", 0.02}},
      /*with_dev=*/true);
  const std::string model = dir / "model";
  Result r = run(kHeed + " --threads 1 train -c " + config + " -m " + model, dir / "train");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);

  double best_loss = 1e30;
  for (const auto& valid : metrics_records(model, "valid"))
    best_loss = std::min(best_loss, valid.at("loss").get<double>());
  const std::vector<nlohmann::json> averages = metrics_records(model, "average");
  REQUIRE(!averages.empty());
  const nlohmann::json& average = averages.back();
  INFO(average.dump());
  CHECK(average.at("checkpoints") == "3 checkpoints, step-00000020 .. step-00000060");
  const bool kept = average.at("kept").get<bool>();
  CHECK(kept == (average.at("loss").get<double>() < best_loss));
  CHECK(r.err.find(kept ? "kept as model.safetensors" : "not better, not kept") != std::string::npos);

  // model.safetensors is the mean of the three checkpoints exactly when it was kept.
  const SafeTensorFile saved = read_safetensors(model + "/model.safetensors");
  const SafeTensorFile mean = average_checkpoints({model + "/checkpoints/step-00000020.safetensors",
                                                   model + "/checkpoints/step-00000040.safetensors",
                                                   model + "/checkpoints/step-00000060.safetensors"});
  bool equal = true;
  for (const auto& [name, tensor] : mean.tensors) equal = equal && saved.tensors.at(name).data == tensor.data;
  CHECK(equal == kept);
  CHECK(saved.metadata.count("averaged") == (kept ? 1u : 0u));
  // The trainer state's best score is the kept model's: a resumed run replaces it only with a
  // better one.
  const double state_best =
      std::stod(read_safetensors(model + "/trainer_state.safetensors").metadata.at("best_metric"));
  CHECK(state_best == (kept ? average.at("loss").get<double>() : best_loss));

  // Averaging needs the checkpoints kept.
  const std::string bad = write_tiny_config(dir.path.string(), {{"keep_last", 2}, {"average_last", 3}}, true);
  Result refused = run(kHeed + " --threads 1 train -c " + bad + " -m " + (dir / "refused"), dir / "refused");
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("training.average_last (3) needs training.keep_last (2) at least as large") != std::string::npos);
}

TEST_CASE("heed train: training.validation_lines validates on the dev set's first lines") {
  TempDir dir("train-validation-lines");
  write_reverse_corpus(dir.path.string(), "train", 200, 31);
  write_reverse_corpus(dir.path.string(), "dev", 30, 32);
  // Validation losses of a 10-step run, in order.
  auto valid_losses = [&](const std::string& name, const nlohmann::json& training) {
    const std::string config = write_tiny_config(dir.path.string(), training, /*with_dev=*/true);
    const std::string model = dir / name;
    Result r = run(kHeed + " --threads 1 train -c " + config + " -m " + model, dir / name);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    std::vector<double> losses;
    for (const auto& valid : metrics_records(model, "valid")) losses.push_back(valid.at("loss").get<double>());
    return std::make_pair(losses, r.err);
  };
  const nlohmann::json steps = {{"max_steps", 10}, {"validate_every", 5}};
  const auto [all, all_log] = valid_losses("all", steps);
  nlohmann::json subset = steps;
  subset["validation_lines"] = 8;
  const auto [first, first_log] = valid_losses("first", subset);
  CHECK(first_log.find("dev set: 8 pairs (the first of 30 lines: training.validation_lines)") != std::string::npos);

  // The same as validating on a dev file of those 8 lines.
  const std::string src = slurp(dir / "dev.src"), tgt = slurp(dir / "dev.tgt");
  auto first_lines = [](const std::string& text, int n) {
    size_t end = 0;
    for (int i = 0; i < n; ++i) end = text.find('\n', end) + 1;
    return text.substr(0, end);
  };
  std::ofstream(dir / "dev.src") << first_lines(src, 8);
  std::ofstream(dir / "dev.tgt") << first_lines(tgt, 8);
  const auto [short_dev, short_log] = valid_losses("short", steps);
  REQUIRE(first.size() == 2);
  CHECK(first == short_dev);
  CHECK(first != all);
}
