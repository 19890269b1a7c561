// heed average -o OUT CKPT...: the element-wise mean of checkpoints of one model, written as a
// safetensors file; checkpoints of different models, or a missing file, are refused.
#include <catch2/catch.hpp>

#include "io/safetensors.hpp"
#include "train_fixture.hpp"

using namespace heed;
using namespace heed::test;

namespace {
std::string write_checkpoint(const TempDir& dir, const std::string& name, std::vector<float> w,
                             std::vector<int64_t> shape = {2, 2}) {
  SafeTensorFile f;
  f.tensors["encoder.weight"] = SafeTensor::from_f32(shape, w);
  f.tensors["decoder.bias"] = SafeTensor::from_f32({1}, {w[0] * 10});
  f.metadata["step"] = name;
  const std::string path = dir / (name + ".safetensors");
  write_safetensors(path, f);
  return path;
}
}  // namespace

TEST_CASE("heed average: mean of two and three checkpoints") {
  TempDir dir("average-cli");
  const auto a = write_checkpoint(dir, "100", {1, 2, 3, 4});
  const auto b = write_checkpoint(dir, "200", {3, 2, 1, 0});
  const auto c = write_checkpoint(dir, "300", {2, 8, -4, 5});
  Result r = run(kHeed + " average -o " + (dir / "avg2.safetensors") + " " + a + " " + b, dir / "two");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  SafeTensorFile avg = read_safetensors(dir / "avg2.safetensors");
  CHECK(avg.tensors.at("encoder.weight").as_f32() == std::vector<float>{2, 2, 2, 2});
  CHECK(avg.tensors.at("encoder.weight").shape == std::vector<int64_t>{2, 2});
  CHECK(avg.tensors.at("decoder.bias").as_f32() == std::vector<float>{20});

  r = run(kHeed + " average -o " + (dir / "avg3.safetensors") + " " + a + " " + b + " " + c, dir / "three");
  REQUIRE(r.exit_code == 0);
  avg = read_safetensors(dir / "avg3.safetensors");
  CHECK(avg.tensors.at("encoder.weight").as_f32() == std::vector<float>{2, 4, 0, 3});
  CHECK(avg.tensors.at("decoder.bias").as_f32() == std::vector<float>{20});
}

TEST_CASE("heed average: checkpoints of different models or missing files are refused") {
  TempDir dir("average-cli-errors");
  const auto a = write_checkpoint(dir, "100", {1, 2, 3, 4});
  const auto other = write_checkpoint(dir, "other", {1, 2, 3, 4}, {4, 1});
  const std::string out = dir / "avg.safetensors";
  Result r = run(kHeed + " average -o " + out + " " + a + " " + other, dir / "mismatch");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("heed: error: " + other + ": tensor encoder.weight differs in dtype or shape") != std::string::npos);
  CHECK_FALSE(fs::exists(out));  // nothing written

  // A file that cannot be read exits 1, as for every command (translate -i, bleu, tokenizer -m).
  r = run(kHeed + " average -o " + out + " " + a + " " + (dir / "absent.safetensors"), dir / "missing");
  CHECK(r.exit_code == 1);
  CHECK(r.err == "heed: error: cannot read " + (dir / "absent.safetensors") + ": No such file or directory\n");
  CHECK_FALSE(fs::exists(out));

  r = run(kHeed + " average " + a, dir / "no-output");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--output") != std::string::npos);
}
