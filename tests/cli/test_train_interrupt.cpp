// Ctrl-C: SIGINT during training saves the trainer state and exits promptly with status 1;
// --resume (here with a new max_steps) continues from the saved step, and a run interrupted and
// resumed ends as the uninterrupted one does, averaging included. metrics.jsonl holds one valid
// JSON object per line with the documented fields.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>

#include "io/safetensors.hpp"
#include "train_fixture.hpp"

using namespace heed;
using namespace heed::test;

TEST_CASE("heed train: SIGINT saves a checkpoint, exits 1 promptly, and the run resumes") {
  TempDir dir("train-interrupt");
  write_reverse_corpus(dir.path.string(), "train", 200, 12);
  const std::string config = write_tiny_config(dir.path.string(), {{"max_steps", 0}, {"max_time", "10m"}});
  const std::string model = dir / "model";

  const pid_t pid = spawn_heed({"--threads", "1", "train", "-c", config, "-m", model}, dir / "log");
  const bool state_seen = wait_for_file(model + "/checkpoints/step-00000005.safetensors", pid);
  const auto signalled = std::chrono::steady_clock::now();
  ::kill(pid, SIGINT);
  const int status = wait_child(pid);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - signalled).count();
  const std::string err = slurp(dir / "log.err");
  INFO(err);
  REQUIRE(state_seen);
  CHECK(status == 1);
  CHECK(seconds < 5);
  CHECK(err.find("heed: error: interrupted") != std::string::npos);

  const int64_t step = std::stoll(read_safetensors(model + "/trainer_state.safetensors").metadata.at("step"));
  CHECK(step >= 5);
  CHECK(err.find("checkpoint saved at step " + std::to_string(step)) != std::string::npos);
  // The state is saved whatever the step; checkpoints/ gets a file only at a scheduled step
  // (validate_every 5), as in a run that was not interrupted.
  CHECK(fs::exists(model + "/checkpoints/step-" + std::string(8 - std::to_string(step).size(), '0') +
                   std::to_string(step) + ".safetensors") == (step % 5 == 0));
  CHECK(fs::exists(model + "/checkpoints/step-00000005.safetensors"));

  const int64_t target = step + 7;
  Result resumed = run(kHeed + " --threads 1 train --resume -m " + model +
                           " --set training.max_steps=" + std::to_string(target) + " --set training.max_time=0",
                       dir / "resumed");
  INFO(resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK(resumed.err.find("resumed at step " + std::to_string(step)) != std::string::npos);
  CHECK(std::stoll(read_safetensors(model + "/trainer_state.safetensors").metadata.at("step")) == target);

  // metrics.jsonl: every line a JSON object with its type's fields
  std::ifstream metrics(model + "/metrics.jsonl");
  std::string line;
  int train_lines = 0;
  int64_t last_step = 0;
  while (std::getline(metrics, line)) {
    INFO(line);
    const auto j = nlohmann::json::parse(line);  // throws (fails the test) when not JSON
    REQUIRE(j.is_object());
    REQUIRE(j.at("type") == "train");  // no dev set: no "valid" records
    for (const char* field : {"step", "epoch", "loss", "nll", "ppl", "tokens_per_s", "lr", "elapsed"})
      CHECK(j.contains(field));
    CHECK(j.at("loss").get<double>() > 0);
    CHECK(j.at("ppl").get<double>() >= 1);
    CHECK(j.at("step").get<int64_t>() % 5 == 0);
    last_step = j.at("step").get<int64_t>();
    ++train_lines;
  }
  CHECK(train_lines >= 2);
  CHECK(last_step == target - target % 5);
}

namespace {
// The "average" record of a run's metrics.jsonl (null when there is none).
nlohmann::json average_record(const std::string& model) {
  std::ifstream metrics(model + "/metrics.jsonl");
  nlohmann::json average;
  for (std::string line; std::getline(metrics, line);)
    if (const auto j = nlohmann::json::parse(line); j.at("type") == "average") average = j;
  return average;
}
}  // namespace

TEST_CASE("heed train: a run interrupted and resumed ends with the uninterrupted run's checkpoints and mean") {
  TempDir dir("train-interrupt-average");
  write_reverse_corpus(dir.path.string(), "train", 300, 41);
  write_reverse_corpus(dir.path.string(), "dev", 20, 42);
  // average_last above the number of checkpoints: the mean takes every file in checkpoints/.
  const std::string config = write_tiny_config(
      dir.path.string(), {{"max_steps", 60}, {"validate_every", 5}, {"keep_last", 100}, {"average_last", 50}}, true);
  const std::string whole = dir / "whole", cut = dir / "cut";
  Result r = run(kHeed + " --threads 1 train -c " + config + " -m " + whole, dir / "whole");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);

  const pid_t pid = spawn_heed({"--threads", "1", "train", "-c", config, "-m", cut}, dir / "cut");
  const bool seen = wait_for_file(cut + "/checkpoints/step-00000005.safetensors", pid);
  ::kill(pid, SIGINT);
  const int status = wait_child(pid);
  INFO(slurp(dir / "cut.err"));
  REQUIRE(seen);
  REQUIRE(status == 1);  // interrupted before the end, so the resume below has work to do
  r = run(kHeed + " --threads 1 train --resume -m " + cut, dir / "resumed");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);

  std::vector<std::string> names[2];
  for (int i = 0; i < 2; ++i)
    for (const auto& e : fs::directory_iterator((i ? cut : whole) + "/checkpoints"))
      names[i].push_back(e.path().filename().string());
  std::sort(names[0].begin(), names[0].end());
  std::sort(names[1].begin(), names[1].end());
  CHECK(names[1] == names[0]);
  CHECK(names[0].size() == 12);
  const nlohmann::json a = average_record(whole), b = average_record(cut);
  CHECK(a.at("checkpoints") == "12 checkpoints, step-00000005 .. step-00000060");
  CHECK(b.at("checkpoints") == a.at("checkpoints"));
  CHECK(b.at("loss") == a.at("loss"));
  CHECK(slurp(cut + "/model.safetensors") == slurp(whole + "/model.safetensors"));
}

TEST_CASE("heed train: SIGTERM and SIGHUP (a closed terminal) save a checkpoint as SIGINT does") {
  for (int sig : {SIGTERM, SIGHUP}) {
    INFO("signal " << sig);
    TempDir dir("train-hangup");
    write_reverse_corpus(dir.path.string(), "train", 200, 15);
    const std::string config = write_tiny_config(dir.path.string(), {{"max_steps", 0}, {"max_time", "10m"}});
    const std::string model = dir / "model";
    const pid_t pid = spawn_heed({"--threads", "1", "train", "-c", config, "-m", model}, dir / "log");
    const bool state_seen = wait_for_file(model + "/checkpoints/step-00000005.safetensors", pid);
    ::kill(pid, sig);
    const int status = wait_child(pid);
    const std::string err = slurp(dir / "log.err");
    INFO(err);
    REQUIRE(state_seen);
    CHECK(status == 1);
    const int64_t step = std::stoll(read_safetensors(model + "/trainer_state.safetensors").metadata.at("step"));
    CHECK(err.find("checkpoint saved at step " + std::to_string(step) + "; continue with --resume") !=
          std::string::npos);
    CHECK_THAT(err, Catch::EndsWith("heed: error: interrupted\n"));
  }
}
