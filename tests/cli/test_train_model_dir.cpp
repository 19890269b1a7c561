// What a training run may do to its model directory: nothing before every check has passed (a
// refused --resume leaves every file as it was), one run at a time (a lock naming the holder's
// PID, released when the holder dies, however it dies), and dev sets that can neither stop a run
// (lines too long for the model) nor pass unnoticed (empty).
#include <catch2/catch.hpp>

#include <map>

#include "io/safetensors.hpp"
#include "train_fixture.hpp"

using namespace heed;
using namespace heed::test;

namespace {

// Every file below `dir` (relative path → bytes), the lock file aside.
std::map<std::string, std::string> snapshot(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename() != "train.lock")
      files[fs::relative(e.path(), dir).string()] = slurp(e.path().string());
  return files;
}

int64_t state_step(const std::string& model_dir) {
  return std::stoll(read_safetensors(model_dir + "/trainer_state.safetensors").metadata.at("step"));
}

struct TrainedDir {
  TempDir dir{"train-model-dir"};
  std::string config, model;
  explicit TrainedDir(int steps = 5) {
    write_reverse_corpus(dir.path.string(), "train", 60, 21);
    config = write_tiny_config(dir.path.string(), {{"max_steps", steps}});
    model = dir / "model";
    Result r = run(kHeed + " --threads 1 train -c " + config + " -m " + model, dir / "first");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
  }
};

}  // namespace

TEST_CASE("a resume that would change the model is refused before anything is written", "[cli][train]") {
  TrainedDir t;
  const auto before = snapshot(t.model);
  REQUIRE(before.count("config.json") == 1);

  Result r = run(kHeed + " --threads 1 train -m " + t.model + " --resume --set model.gru.emb_dim=32", t.dir / "arch");
  CHECK(r.exit_code == 2);
  CHECK(r.err == "heed: error: --resume cannot change model.gru.emb_dim (8 in " + t.model +
                     "/config.json, now 32): it defines the trained model; train into a new directory instead\n");
  CHECK(snapshot(t.model) == before);

  r = run(kHeed + " --threads 1 train -m " + t.model + " --resume --set tokenizer.vocab_size=400", t.dir / "tok");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--resume cannot change tokenizer.vocab_size (300 in ") != std::string::npos);
  CHECK(snapshot(t.model) == before);

  r = run(kHeed + " --threads 1 train -m " + t.model + " --resume --set model.arch=transformer",
          t.dir / "to-transformer");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--resume cannot change model.arch (\"gru-bahdanau\" in ") != std::string::npos);
  CHECK(snapshot(t.model) == before);

  // A resume that fails later (its training data is gone) leaves config.json as it was, too.
  r = run(kHeed + " --threads 1 train -m " + t.model + " --resume --set training.max_steps=9 --set data.train.src=" +
              (t.dir / "gone.src") + " --set data.train.tgt=" + (t.dir / "gone.tgt"),
          t.dir / "gone");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("heed: error: cannot read " + (t.dir / "gone.src")) != std::string::npos);
  CHECK(snapshot(t.model) == before);

  // The directory still translates and resumes; dropout and training settings may change.
  r = run("echo 'kalo mimi' | " + kHeed + " --threads 1 translate -m " + t.model, t.dir / "translate");
  CHECK(r.exit_code == 0);
  r = run(kHeed + " --threads 1 train -m " + t.model + " --resume --set training.max_steps=8 --set model.dropout=0.2",
          t.dir / "resume");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(state_step(t.model) == 8);
}

TEST_CASE("one run per model directory: a second one exits 2 naming the holder; a dead holder frees it",
          "[cli][train]") {
  TempDir dir("train-lock");
  write_reverse_corpus(dir.path.string(), "train", 200, 22);
  const std::string config = write_tiny_config(dir.path.string(), {{"max_steps", 0}, {"max_time", "10m"}});
  const std::string model = dir / "model";

  const pid_t first = spawn_heed({"--threads", "1", "train", "-c", config, "-m", model}, dir / "first");
  const bool running = wait_for_file(model + "/checkpoints/step-00000005.safetensors", first);
  Result second =
      run(kHeed + " --threads 1 train --resume -m " + model + " --set training.max_steps=100", dir / "second");
  Result fresh = run(kHeed + " --threads 1 train -c " + config + " -m " + model, dir / "fresh");
  ::kill(first, SIGKILL);
  const int status = wait_child(first);
  REQUIRE(running);
  CHECK(status == -SIGKILL);  // the second run did not stop the first
  const std::string expected = "heed: error: " + model + " is in use by another training run (PID " +
                               std::to_string(first) + ", holding " + model + "/train.lock); wait for it to end, or " +
                               "stop it first\n";
  CHECK(second.exit_code == 2);
  CHECK(second.err == expected);
  CHECK(fresh.exit_code == 2);
  CHECK(fresh.err == expected);

  // SIGKILL leaves the lock file, but the kernel released the lock with the process.
  const int64_t step = state_step(model);
  Result resumed = run(kHeed + " --threads 1 train --resume -m " + model +
                           " --set training.max_steps=" + std::to_string(step + 3) + " --set training.max_time=0",
                       dir / "resumed");
  INFO(resumed.err);
  CHECK(resumed.exit_code == 0);
  CHECK(state_step(model) == step + 3);
}

TEST_CASE("a Transformer's dev line longer than max_positions does not stop training", "[cli][train]") {
  TempDir dir("train-long-dev");
  write_reverse_corpus(dir.path.string(), "train", 80, 23);
  write_reverse_corpus(dir.path.string(), "dev", 5, 24);
  {  // one dev pair of 300 words on each side: far beyond the 48 positions
    std::ofstream src(dir / "dev.src", std::ios::app), tgt(dir / "dev.tgt", std::ios::app);
    for (int i = 0; i < 300; ++i) src << (i ? " " : "") << "kalo";
    for (int i = 0; i < 300; ++i) tgt << (i ? " " : "") << "mimi";
    src << '\n';
    tgt << '\n';
  }
  const std::string config = write_tiny_config(
      dir.path.string(), {{"max_steps", 4}, {"validate_every", 2}, {"validation_metric", "bleu"}}, true);
  const std::string transformer =
      "--set model.arch=transformer --set model.transformer.d_model=8 "
      "--set model.transformer.heads=2 --set model.transformer.ffn_dim=16 "
      "--set model.transformer.enc_layers=1 --set model.transformer.dec_layers=1 ";
  const std::string model = dir / "model";
  Result r = run(kHeed + " --threads 1 train -c " + config + " -m " + model + " " + transformer +
                     "--set model.transformer.max_positions=48",
                 dir / "log");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("dev set: 6 pairs; cross-entropy on 5 (0 with an empty side, 1 longer than data.max_length 40 "
                   "left out); BLEU on all 6 lines") != std::string::npos);
  CHECK(state_step(model) == 4);
  CHECK(fs::exists(model + "/checkpoints/step-00000002.safetensors"));

  // The config check: positions for a longest source and its </s>.
  r = run(kHeed + " --threads 1 train -c " + config + " -m " + (dir / "other") + " " + transformer +
              "--set model.transformer.max_positions=40",
          dir / "check");
  CHECK(r.exit_code == 2);
  CHECK(r.err == "heed: error: " + config +
                     ": model.transformer.max_positions (40) must exceed data.max_length (40): "
                     "a source of max_length tokens and its </s>\n");
  CHECK_FALSE(fs::exists(dir / "other"));
}

TEST_CASE("an empty dev set is an error before anything is written", "[cli][train]") {
  TempDir dir("train-empty-dev");
  write_reverse_corpus(dir.path.string(), "train", 60, 25);
  std::ofstream(dir / "dev.src");
  std::ofstream(dir / "dev.tgt");
  const std::string config = write_tiny_config(dir.path.string(), {{"max_steps", 4}}, true);
  const std::string model = dir / "model";
  Result r = run(kHeed + " --threads 1 train -c " + config + " -m " + model, dir / "log");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("heed: error: data.dev: no usable pairs in " + (dir / "dev.src") + " and " + (dir / "dev.tgt") +
                   " (0 lines: 0 with an empty side, 0 longer than data.max_length 40)\n") != std::string::npos);
  CHECK(snapshot(model).empty());
}
