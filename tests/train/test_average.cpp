// Checkpoint averaging: element-wise means of same-named tensors; any mismatch between the files
// is an error naming the file and the tensor.
#include <catch2/catch.hpp>

#include "../temp_dir.hpp"

#include <filesystem>

#include "train/average.hpp"
#include "util/error.hpp"

using namespace heed;
namespace fs = std::filesystem;

namespace {
struct TempDir : test::TempDir {
  TempDir() : test::TempDir("average") {}
  std::string write(const std::string& name, const SafeTensorFile& f) const {
    write_safetensors(*this / name, f);
    return *this / name;
  }
};

SafeTensorFile file(std::vector<float> a, std::vector<float> b, std::vector<int64_t> b_shape = {1, 2}) {
  SafeTensorFile f;
  f.tensors["enc.weight"] = SafeTensor::from_f32({2}, a);
  f.tensors["dec.bias"] = SafeTensor::from_f32(b_shape, b);
  f.metadata["step"] = "100";
  return f;
}
}  // namespace

TEST_CASE("average_checkpoints: element-wise mean, metadata of the first file") {
  TempDir dir;
  const auto p1 = dir.write("a.safetensors", file({1, 2}, {3, -1}));
  const auto p2 = dir.write("b.safetensors", file({3, 5}, {4, 1}));
  const auto p3 = dir.write("c.safetensors", file({2, 8}, {-1, 3}));
  SafeTensorFile two = average_checkpoints({p1, p2});
  CHECK(two.tensors.at("enc.weight").as_f32() == std::vector<float>{2, 3.5});
  CHECK(two.tensors.at("dec.bias").as_f32() == std::vector<float>{3.5, 0});
  CHECK(two.tensors.at("dec.bias").shape == std::vector<int64_t>{1, 2});
  CHECK(two.metadata.at("step") == "100");
  SafeTensorFile three = average_checkpoints({p1, p2, p3});
  CHECK(three.tensors.at("enc.weight").as_f32() == std::vector<float>{2, 5});
  CHECK(three.tensors.at("dec.bias").as_f32() == std::vector<float>{2, 1});
  // one file: itself
  CHECK(average_checkpoints({p1}).tensors.at("enc.weight").as_f32() == std::vector<float>{1, 2});
}

TEST_CASE("average_checkpoints: files of different models are an error naming file and tensor") {
  TempDir dir;
  const auto good = dir.write("good.safetensors", file({1, 2}, {3, -1}));
  const auto shape = dir.write("shape.safetensors", file({1, 2}, {3, -1}, {2, 1}));
  SafeTensorFile renamed = file({1, 2}, {3, -1});
  renamed.tensors["dec.weight"] = renamed.tensors.at("dec.bias");
  renamed.tensors.erase("dec.bias");
  const auto other = dir.write("other.safetensors", renamed);
  SafeTensorFile extra_tensor = file({1, 2}, {3, -1});
  extra_tensor.tensors["extra"] = SafeTensor::from_f32({1}, {0});
  const auto extra = dir.write("extra.safetensors", extra_tensor);
  SafeTensorFile ints = file({1, 2}, {3, -1});
  ints.tensors["enc.weight"] = SafeTensor::from_i64({2}, {1, 2});
  const auto int_file = dir.write("ints.safetensors", ints);

  CHECK_THROWS_WITH(average_checkpoints({good, shape}),
                    Catch::Contains("shape.safetensors") && Catch::Contains("dec.bias"));
  CHECK_THROWS_WITH(average_checkpoints({good, other}),
                    Catch::Contains("other.safetensors") && Catch::Contains("dec.weight"));
  CHECK_THROWS_WITH(average_checkpoints({good, extra}), Catch::Contains("extra.safetensors"));
  CHECK_THROWS_WITH(average_checkpoints({extra, good}), Catch::Contains("good.safetensors"));
  CHECK_THROWS_WITH(average_checkpoints({int_file, good}), Catch::Contains("enc.weight") && Catch::Contains("I64"));
  CHECK_THROWS_WITH(average_checkpoints({good, int_file}), Catch::Contains("ints.safetensors"));
  CHECK_THROWS_AS(average_checkpoints({}), UsageError);
}
