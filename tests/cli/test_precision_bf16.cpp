// bf16 from the command line (skipped on a CPU without bf16, catch_main.cpp): training with
// training.precision bf16 is deterministic for a thread count and differs from fp32 (the bf16
// products ran), its checkpoints stay F32 and translate in fp32 and bf16; a trained model's bf16
// translations equal its fp32 ones (reverse task, greedy and beam 5); a bf16 run stopped and
// resumed equals the uninterrupted one.
#include <catch2/catch.hpp>

#include "io/safetensors.hpp"
#include "train_fixture.hpp"

using namespace heed;
using namespace heed::test;

namespace {
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}
}  // namespace

TEST_CASE("train with training.precision bf16: deterministic, F32 checkpoints, translates in both precisions",
          "[cli][bf16]") {
  TempDir dir("train-bf16");
  write_reverse_corpus(dir.path.string(), "train", 200, 11);
  const std::string config = write_tiny_config(dir.path.string(), {{"max_steps", 20}});
  const std::string a = dir / "a", b = dir / "b", fp32 = dir / "fp32";
  const std::string bf16 = " --set training.precision=bf16";
  const Result ra = run(kHeed + " --threads 1 train -c " + config + " -m " + a + bf16, dir / "a-log");
  INFO(ra.err);
  REQUIRE(ra.exit_code == 0);
  CHECK(ra.err.find("products in bf16") != std::string::npos);
  REQUIRE(run(kHeed + " --threads 1 train -c " + config + " -m " + b + bf16, dir / "b-log").exit_code == 0);
  REQUIRE(run(kHeed + " --threads 1 train -c " + config + " -m " + fp32, dir / "f-log").exit_code == 0);
  CHECK(slurp(a + "/model.safetensors") == slurp(b + "/model.safetensors"));
  const std::string last = "/checkpoints/step-00000020.safetensors";
  CHECK(slurp(a + last) == slurp(b + last));
  CHECK(slurp(a + "/model.safetensors") != slurp(fp32 + "/model.safetensors"));
  for (const auto& [name, t] : read_safetensors(a + "/model.safetensors").tensors) CHECK(t.dtype == "F32");

  const std::string input = dir / "train.src";
  const Result t32 = run(kHeed + " --threads 1 translate -m " + a + " --precision fp32 -i " + input, dir / "t32");
  const Result t16 = run(kHeed + " --threads 1 translate -m " + a + " --precision bf16 -i " + input, dir / "t16");
  INFO(t16.err);
  REQUIRE(t32.exit_code == 0);
  REQUIRE(t16.exit_code == 0);
  CHECK(t16.err.find("gru-bahdanau bf16 model") != std::string::npos);
  CHECK(lines_of(t16.out).size() == 200);
  CHECK(lines_of(t32.out).size() == 200);
}

TEST_CASE("a trained model's bf16 translations equal its fp32 ones (reverse task)", "[cli][bf16]") {
  TempDir dir("translate-bf16");
  const std::string fixture = std::string(HEED_TEST_FIXTURES) + "/reverse_gru";
  const auto expected = lines_of(slurp(fixture + "/test.tgt"));
  REQUIRE(expected.size() == 200);
  for (const std::string beam : {"1", "5"}) {
    const std::string common = kHeed + " --threads 1 translate -m " + fixture + " --beam " + beam + " -i " + fixture + "/test.src";
    const Result fp32 = run(common + " --precision fp32", dir / "fp32");
    const Result bf16 = run(common + " --precision bf16", dir / "bf16");
    INFO(bf16.err);
    REQUIRE(fp32.exit_code == 0);
    REQUIRE(bf16.exit_code == 0);
    CHECK(lines_of(fp32.out) == expected);
    CHECK(bf16.out == fp32.out);
  }
}

TEST_CASE("a bf16 run stopped and resumed equals the run without a stop, bit for bit", "[cli][bf16]") {
  TempDir dir("train-bf16-resume");
  write_reverse_corpus(dir.path.string(), "train", 200, 11);
  const std::string config = write_tiny_config(dir.path.string(), {{"max_steps", 20}});
  const std::string whole = dir / "whole", split = dir / "split";
  const std::string bf16 = " --set training.precision=bf16";
  REQUIRE(run(kHeed + " --threads 1 train -c " + config + " -m " + whole + bf16, dir / "whole-log").exit_code == 0);
  REQUIRE(run(kHeed + " --threads 1 train -c " + config + " -m " + split + bf16 + " --set training.max_steps=10",
              dir / "split-log")
              .exit_code == 0);
  const Result resumed =
      run(kHeed + " --threads 1 train --resume -m " + split + " --set training.max_steps=20", dir / "resumed-log");
  INFO(resumed.err);
  REQUIRE(resumed.exit_code == 0);
  const SafeTensorFile a = read_safetensors(whole + "/trainer_state.safetensors");
  const SafeTensorFile b = read_safetensors(split + "/trainer_state.safetensors");
  REQUIRE(a.tensors.size() == b.tensors.size());
  for (const auto& [name, t] : a.tensors) {
    INFO(name);
    CHECK(t.data == b.tensors.at(name).data);  // parameters and Adam moments
  }
  CHECK(slurp(whole + "/model.safetensors") == slurp(split + "/model.safetensors"));
}
