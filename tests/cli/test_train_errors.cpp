// `heed train` refusals and failures: each a one-line error with the right exit code, never a
// crash. Resuming without a state, training over an existing run, a truncated trainer state or
// model file, and a diverging run (non-finite loss) that stops after training.max_bad_steps, also
// when the streak of skipped updates spans a resume.
#include <unistd.h>
#include <catch2/catch.hpp>

#include "io/safetensors.hpp"
#include "skip_count_resume.hpp"
#include "train_fixture.hpp"

using namespace heed::test;

namespace {
struct TrainedDir {
  TempDir dir{"train-errors"};
  std::string config, model;
  TrainedDir() {
    write_reverse_corpus(dir.path.string(), "train", 60, 13);
    config = write_tiny_config(dir.path.string(), {{"max_steps", 5}});
    model = dir / "model";
    Result r = run(kHeed + " --threads 1 train -c " + config + " -m " + model, dir / "first");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
  }
};

void write_prefix(const std::string& path, const std::string& bytes, size_t keep) {
  REQUIRE(bytes.size() > keep);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes.substr(0, keep);
}
}  // namespace

TEST_CASE("heed train: --resume without a trainer state, or a second run into a used directory, exit 2") {
  TrainedDir t;
  Result r = run(kHeed + " --threads 1 train -c " + t.config + " -m " + t.model, t.dir / "again");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("heed: error: " + t.model + " already holds a training run; use --resume") != std::string::npos);

  // A model whose trainer state was removed: refused too, and nothing in it changes.
  fs::remove(t.model + "/trainer_state.safetensors");
  const std::string model_bytes = slurp(t.model + "/model.safetensors"), config_bytes = slurp(t.model + "/config.json");
  r = run(kHeed + " --threads 1 train -c " + t.config + " -m " + t.model, t.dir / "stateless");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("heed: error: " + t.model + " already holds a model (checkpoints/" +
                                    "step-00000005.safetensors) but no trainer_state.safetensors"));
  CHECK(slurp(t.model + "/model.safetensors") == model_bytes);
  CHECK(slurp(t.model + "/config.json") == config_bytes);
  CHECK(fs::exists(t.model + "/checkpoints/step-00000005.safetensors"));
  // A model.safetensors that no run left (no checkpoints/ beside it, as in a quantized copy).
  fs::remove_all(t.model + "/checkpoints");
  r = run(kHeed + " --threads 1 train -c " + t.config + " -m " + t.model, t.dir / "foreign");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("already holds a model (model.safetensors)"));
  CHECK(slurp(t.model + "/model.safetensors") == model_bytes);
  // A run pruned to its model (its state and checkpoints removed), whose checkpoints/ holds only a
  // file that is not a step checkpoint.
  fs::create_directory(t.model + "/checkpoints");
  std::ofstream(t.model + "/checkpoints/mean.safetensors") << "kept";
  r = run(kHeed + " --threads 1 train -c " + t.config + " -m " + t.model, t.dir / "pruned");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("already holds a model (model.safetensors)"));
  CHECK(slurp(t.model + "/model.safetensors") == model_bytes);
  // A run killed before its first trainer state (training writes it before the first validation
  // writes the model) leaves no model: it may start over.
  fs::remove(t.model + "/model.safetensors");
  // Temporaries of ended processes (NAME.tmp.PID) go; a user's file and a live process's stay.
  const std::string live = t.model + "/out.txt.tmp." + std::to_string(::getpid());
  for (const std::string name : {"/model.safetensors.tmp.999999999", "/notes.tmp.md"})
    std::ofstream(t.model + name) << "x";
  std::ofstream(live) << "x";
  r = run(kHeed + " --threads 1 train -c " + t.config + " -m " + t.model, t.dir / "restart");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(fs::exists(t.model + "/trainer_state.safetensors"));
  CHECK(slurp(t.model + "/checkpoints/mean.safetensors") == "kept");  // neither pruned nor averaged
  CHECK(fs::exists(t.model + "/checkpoints/step-00000005.safetensors"));
  CHECK_FALSE(fs::exists(t.model + "/model.safetensors.tmp.999999999"));
  CHECK(fs::exists(t.model + "/notes.tmp.md"));
  CHECK(fs::exists(live));

  const std::string empty = t.dir / "empty";
  r = run(kHeed + " --threads 1 train --resume -c " + t.config + " -m " + empty, t.dir / "no-state");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("has no trainer_state.safetensors to resume from") != std::string::npos);

  r = run(kHeed + " --threads 1 train --resume -m " + empty, t.dir / "no-config");
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("config.json") != std::string::npos);

  r = run(kHeed + " --threads 1 train", t.dir / "nothing");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("give a config with -c") != std::string::npos);
}

TEST_CASE("heed train --resume: a truncated trainer state is a clear error, exit 1") {
  TrainedDir t;
  const std::string state = t.model + "/trainer_state.safetensors";
  const std::string bytes = slurp(state);
  for (size_t keep : {size_t{4}, size_t{100}, bytes.size() / 2, bytes.size() - 1}) {
    INFO("kept " << keep << " of " << bytes.size() << " bytes");
    write_prefix(state, bytes, keep);
    Result r = run(kHeed + " --threads 1 train --resume -m " + t.model + " --set training.max_steps=8", t.dir / "cut");
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("heed: error: " + state + ": ") != std::string::npos);
  }
  // the intact file resumes: the errors above came from the cuts
  std::ofstream(state, std::ios::binary | std::ios::trunc) << bytes;
  Result r = run(kHeed + " --threads 1 train --resume -m " + t.model + " --set training.max_steps=8", t.dir / "whole");
  INFO(r.err);
  CHECK(r.exit_code == 0);
}

TEST_CASE("heed translate: a truncated model.safetensors is a clear error, exit 1") {
  TrainedDir t;
  const std::string weights = t.model + "/model.safetensors";
  write_prefix(weights, slurp(weights), slurp(weights).size() / 2);
  Result r = run("echo 'kalo mimi' | " + kHeed + " --threads 1 translate -m " + t.model, t.dir / "translate");
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("heed: error: " + weights + ": ") != std::string::npos);
  CHECK(r.out.empty());
}

TEST_CASE("heed train: a non-finite loss skips updates, then stops after max_bad_steps, exit 1") {
  TempDir dir("train-diverge");
  write_reverse_corpus(dir.path.string(), "train", 60, 14);
  // Adam moves every parameter by about the learning rate: after one step of 3e38 (near the float
  // maximum) the output layer's sums overflow to ±Inf, and the loss is NaN from then on.
  const std::string config = write_tiny_config(
      dir.path.string(), {{"learning_rate", 3e38}, {"max_steps", 50}, {"max_bad_steps", 3}, {"clip_norm", 0}});
  Result r = run(kHeed + " --threads 1 train -c " + config + " -m " + (dir / "model"), dir / "log");
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("[warning] step 2: non-finite loss or gradient, update skipped (1 in a row)") != std::string::npos);
  CHECK(r.err.find("update skipped (3 in a row)") != std::string::npos);
  CHECK(r.err.find("heed: error: training diverged: 3 consecutive updates with non-finite loss or gradients "
                   "(training.max_bad_steps)") != std::string::npos);
}

TEST_CASE("heed train: updates skipped in a row are counted on across a resume") {
  TempDir dir("train-diverge-resume");
  write_reverse_corpus(dir.path.string(), "train", 60, 14);
  // As above, every update after the first is skipped; the budget ends the run in mid-streak.
  const std::string config = write_tiny_config(
      dir.path.string(),
      {{"learning_rate", 3e38}, {"max_steps", 0}, {"max_time", "1s"}, {"max_bad_steps", 1000000000}, {"clip_norm", 0}});
  const std::string model = dir / "model";
  Result first = run(kHeed + " --threads 1 train -c " + config + " -m " + model, dir / "first");
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  CHECK(heed::read_safetensors(model + "/trainer_state.safetensors").metadata.at("step") == "1");
  check_skip_count_resumes(
      first, model,
      kHeed + " --threads 1 train -c " + config + " -m " + model + " --resume --set training.max_time=10m",
      dir / "resumed");
}

TEST_CASE("heed train: a model directory whose name is not UTF-8 is refused before anything is written") {
  TempDir dir("train-model-dir-utf8");
  write_reverse_corpus(dir.path.string(), "train", 60, 14);
  const std::string config = write_tiny_config(dir.path.string(), {{"max_steps", 2}});
  const std::string model = dir / "run\xff";
  Result r = run(kHeed + " --threads 1 train -c " + config + " -m '" + model + "'", dir / "log");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("the model directory's name is not UTF-8"));
  CHECK(!fs::exists(model));
}

TEST_CASE("heed train: a UTF-16 training file is refused naming it, exit 1, nothing written") {
  TempDir dir("train-utf16");
  write_reverse_corpus(dir.path.string(), "train", 60, 15);
  // The target side saved as UTF-16LE with its mark, as Windows tools write "Unicode" text.
  const std::string utf8 = slurp(dir / "train.tgt");
  std::string utf16 = "\xFF\xFE";
  for (char c : utf8) utf16 += std::string{c, '\0'};
  std::ofstream(dir / "train.tgt", std::ios::binary | std::ios::trunc) << utf16;
  const std::string config = write_tiny_config(dir.path.string(), {{"max_steps", 2}});
  const std::string model = dir / "model";
  Result r = run(kHeed + " --threads 1 train -c " + config + " -m " + model, dir / "log");
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::EndsWith("heed: error: " + (dir / "train.tgt") +
                                    ":1: a NUL byte at byte 4 (is the file UTF-16? heed reads UTF-8)\n"));
  for (const auto& e : fs::directory_iterator(model)) CHECK(e.path().filename() == "train.lock");
}

TEST_CASE("heed train: files of different lengths are refused before the tokenizer is learned") {
  TempDir dir("train-line-counts");
  write_reverse_corpus(dir.path.string(), "train", 60, 16);
  write_reverse_corpus(dir.path.string(), "dev", 10, 17);
  const std::string config = write_tiny_config(dir.path.string(), {{"max_steps", 2}}, true);
  const std::string model = dir / "model";
  auto drop_last_line = [&](const std::string& path) {
    std::string text = slurp(path);
    text.erase(text.rfind('\n', text.size() - 2) + 1);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  };
  auto check_refused = [&](const std::string& src, size_t src_lines, const std::string& tgt, size_t tgt_lines) {
    Result r = run(kHeed + " --threads 1 train -c " + config + " -m " + model, dir / "log");
    CHECK(r.exit_code == 1);
    // The error, and nothing of the tokenizer's learning (which took minutes on a real corpus).
    CHECK_THAT(r.err, Catch::EndsWith("heed: error: parallel files differ in length: " + src + " has " +
                                      std::to_string(src_lines) + " lines, " + tgt + " has " +
                                      std::to_string(tgt_lines) + "\n"));
    CHECK_THAT(r.err, !Catch::Contains("tokenizer"));
    CHECK(!fs::exists(model + "/tokenizer.json"));
    CHECK(!fs::exists(model + "/config.json"));
  };
  drop_last_line(dir / "dev.tgt");  // the dev pair is checked early too
  check_refused(dir / "dev.src", 10, dir / "dev.tgt", 9);
  drop_last_line(dir / "train.tgt");
  check_refused(dir / "train.src", 60, dir / "train.tgt", 59);
}
