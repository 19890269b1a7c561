// Exact resume: a run killed with SIGKILL after its step-10 checkpoint and resumed with --resume
// ends with the same bytes as an uninterrupted run of the same length (one thread: bitwise, with
// dropout on, so the data position and the dropout RNG must be restored too). Every
// .safetensors file the killed run left behind must load: writes are atomic. A resume writes the
// step files a kill left unwritten, and saves the validation it redoes.
#include <catch2/catch.hpp>

#include "io/safetensors.hpp"
#include "train_fixture.hpp"

using namespace heed;
using namespace heed::test;

namespace {
int64_t state_step(const std::string& model_dir) {
  return std::stoll(read_safetensors(model_dir + "/trainer_state.safetensors").metadata.at("step"));
}
}  // namespace

TEST_CASE("heed train: killed with SIGKILL and resumed == uninterrupted (bitwise, 1 thread)") {
  TempDir dir("train-resume");
  write_reverse_corpus(dir.path.string(), "train", 200, 11);
  const std::string config = write_tiny_config(dir.path.string(), {{"max_steps", 40}});
  const std::string full = dir / "full", killed = dir / "killed";

  Result ref = run(kHeed + " --threads 1 train -c " + config + " -m " + full, dir / "full-log");
  INFO(ref.err);
  REQUIRE(ref.exit_code == 0);
  CHECK(state_step(full) == 40);

  const pid_t pid = spawn_heed({"--threads", "1", "train", "-c", config, "-m", killed}, dir / "killed-log");
  const bool checkpoint_seen = wait_for_file(killed + "/checkpoints/step-00000010.safetensors", pid);
  ::kill(pid, SIGKILL);
  const int status = wait_child(pid);
  REQUIRE(checkpoint_seen);
  REQUIRE(status == -SIGKILL);  // killed, not finished

  // whatever moment the kill hit, every file present is whole
  for (const auto& entry : fs::recursive_directory_iterator(killed))
    if (entry.path().extension() == ".safetensors") {
      INFO(entry.path());
      CHECK_NOTHROW(read_safetensors(entry.path().string()));
    }
  // The trainer state is written before the checkpoint of its step.
  const int64_t step_at_kill = state_step(killed);
  CHECK(step_at_kill >= 10);
  REQUIRE(step_at_kill < 40);  // the resumed run has steps left to take

  // the resumed run reads config.json from the model directory
  Result resumed = run(kHeed + " --threads 1 train --resume -m " + killed, dir / "resumed-log");
  INFO(resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK(resumed.err.find("resumed at step " + std::to_string(step_at_kill)) != std::string::npos);
  CHECK(state_step(killed) == 40);

  // the final parameters, byte for byte
  const std::string want = slurp(full + "/model.safetensors"), got = slurp(killed + "/model.safetensors");
  REQUIRE(!want.empty());
  const bool same_model = got == want;  // not CHECK(got == want): that would print binary bytes
  CHECK(same_model);
  const bool same_checkpoint = slurp(killed + "/checkpoints/step-00000040.safetensors") ==
                               slurp(full + "/checkpoints/step-00000040.safetensors");
  CHECK(same_checkpoint);
  // parameters and Adam moments in the trainer state; metadata but the elapsed time
  const SafeTensorFile a = read_safetensors(full + "/trainer_state.safetensors");
  const SafeTensorFile b = read_safetensors(killed + "/trainer_state.safetensors");
  REQUIRE(a.tensors.size() == b.tensors.size());
  for (const auto& [name, t] : a.tensors) {
    INFO(name);
    REQUIRE(b.tensors.count(name) == 1);
    CHECK(b.tensors.at(name).shape == t.shape);
    const bool same_bytes = b.tensors.at(name).data == t.data;
    CHECK(same_bytes);
  }
  for (const auto& [key, value] : a.metadata)
    if (key != "elapsed_seconds") {
      INFO(key);
      CHECK(b.metadata.at(key) == value);
    }
}

// A kill after a checkpoint's trainer state and before the step's other files: the resumed run
// writes them from the state (the state is written first, so that a run killed in its first
// checkpoint leaves no state and a fresh run may start in its directory).
TEST_CASE("heed train --resume writes the step files a kill after the trainer state left unwritten") {
  TempDir dir("train-resume-files");
  write_reverse_corpus(dir.path.string(), "train", 200, 11);
  const std::string config = write_tiny_config(dir.path.string(), {{"max_steps", 10}});
  const std::string model = dir / "model";
  Result first = run(kHeed + " --threads 1 train -c " + config + " -m " + model, dir / "first-log");
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  const std::string checkpoint = model + "/checkpoints/step-00000010.safetensors";
  const std::string want_checkpoint = slurp(checkpoint), want_model = slurp(model + "/model.safetensors");
  REQUIRE(!want_checkpoint.empty());
  REQUIRE(!want_model.empty());
  // the files as a kill right after the state of step 10 leaves them
  fs::remove(checkpoint);
  fs::copy_file(model + "/checkpoints/step-00000005.safetensors", model + "/model.safetensors",
                fs::copy_options::overwrite_existing);
  // and the temporaries of writes a kill cut short, the corpus cache's among them
  REQUIRE(fs::is_directory(model + "/cache"));
  const std::vector<std::string> temporaries = {model + "/model.safetensors.tmp.99999",
                                                model + "/checkpoints/step-00000010.safetensors.tmp.99999",
                                                model + "/cache/corpus-0000000000000000.bin.tmp.99999"};
  for (const std::string& t : temporaries) std::ofstream(t) << "partial";

  Result resumed = run(kHeed + " --threads 1 train --resume -m " + model, dir / "resumed-log");
  INFO(resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK(state_step(model) == 10);
  const bool same_checkpoint = slurp(checkpoint) == want_checkpoint;
  CHECK(same_checkpoint);
  const bool same_model = slurp(model + "/model.safetensors") == want_model;
  CHECK(same_model);
  for (const std::string& t : temporaries) CHECK_FALSE(fs::exists(t));
}

TEST_CASE("heed train --resume saves the validation it redoes: a later resume does not redo it again") {
  TempDir dir("train-resume-validation");
  write_reverse_corpus(dir.path.string(), "train", 200, 11);
  write_reverse_corpus(dir.path.string(), "dev", 20, 12);
  const std::string config = write_tiny_config(dir.path.string(), {{"max_steps", 10}}, true);
  const std::string model = dir / "model";
  Result first = run(kHeed + " --threads 1 train -c " + config + " -m " + model, dir / "first-log");
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  // The files as an interrupt during step 10's validation leaves them: the state of step 10 with
  // step 5's validation the last one done, and no record of step 10's.
  const std::string state = model + "/trainer_state.safetensors";
  SafeTensorFile file = read_safetensors(state);
  REQUIRE(file.metadata.at("validated_step") == "10");
  file.metadata["validated_step"] = "5";
  write_safetensors(state, file);
  std::string kept;
  for (const auto& record : metrics_records(model, "train")) kept += record.dump() + "\n";
  for (const auto& record : metrics_records(model, "valid"))
    if (record.at("step") == 5) kept += record.dump() + "\n";
  std::ofstream(model + "/metrics.jsonl") << kept;

  auto valid_records_at_10 = [&] {
    int n = 0;
    for (const auto& record : metrics_records(model, "valid")) n += record.at("step") == 10;
    return n;
  };
  Result resumed = run(kHeed + " --threads 1 train --resume -m " + model, dir / "resumed-log");
  INFO(resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK(valid_records_at_10() == 1);
  CHECK(read_safetensors(state).metadata.at("validated_step") == "10");

  Result longer =
      run(kHeed + " --threads 1 train --resume -m " + model + " --set training.max_steps=15", dir / "longer-log");
  INFO(longer.err);
  REQUIRE(longer.exit_code == 0);
  CHECK(valid_records_at_10() == 1);
  CHECK(state_step(model) == 15);
}

TEST_CASE("heed train: --resume=false trains afresh; --set training.resume=true resumes as --resume does") {
  TempDir dir("train-resume-flag");
  write_reverse_corpus(dir.path.string(), "train", 200, 11);
  const std::string config = write_tiny_config(dir.path.string(), {{"max_steps", 5}});
  const std::string model = dir / "model";
  Result fresh = run(kHeed + " --threads 1 train -c " + config + " -m " + model + " --resume=false", dir / "fresh");
  INFO(fresh.err);
  REQUIRE(fresh.exit_code == 0);  // was read as --resume: "no trainer_state.safetensors"
  CHECK(state_step(model) == 5);
  Result resumed =
      run(kHeed + " --threads 1 train -m " + model + " --set training.resume=true --set training.max_steps=8",
          dir / "resumed");
  INFO(resumed.err);
  REQUIRE(resumed.exit_code == 0);  // was "give a config with -c (or --resume -m MODEL_DIR)"
  CHECK(resumed.err.find("resumed at step 5") != std::string::npos);
  CHECK(state_step(model) == 8);
  // A later --set has the last word over the flag.
  Result not_resumed =
      run(kHeed + " --threads 1 train -m " + model + " --resume --set training.resume=false", dir / "not-resumed");
  CHECK(not_resumed.exit_code == 2);
  CHECK_THAT(not_resumed.err, Catch::Contains("give a config with -c"));
}
