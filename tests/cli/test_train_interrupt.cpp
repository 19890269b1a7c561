// Ctrl-C: SIGINT during training saves a checkpoint and exits promptly with status 1; --resume
// (here with a new max_steps) continues from the saved step. metrics.jsonl holds one valid JSON
// object per line with the documented fields.
#include <catch2/catch.hpp>

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
  // the interrupt checkpoint is written whatever the step (not only every validate_every)
  CHECK(fs::exists(model + "/checkpoints/step-" + std::string(8 - std::to_string(step).size(), '0') +
                   std::to_string(step) + ".safetensors"));

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
