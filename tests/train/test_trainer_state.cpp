// The exact-resume file: a round trip restores parameters, Adam moments and every progress field
// bit for bit; a truncated, corrupt or foreign file is a clear heed::Error naming it, never a crash.
#include <catch2/catch.hpp>

#include "../temp_dir.hpp"

#include <filesystem>
#include <fstream>
#include <limits>

#include "io/safetensors.hpp"
#include "train/checkpoint.hpp"
#include "train/trainer_state.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"

using namespace heed;
namespace fs = std::filesystem;

namespace {
struct TempDir : test::TempDir {
  TempDir() : test::TempDir("trainer-state") {}
  std::string file(const std::string& name) const { return *this / name; }
};

struct TwoParameters {
  ParameterSet params;
  Var w, b;
  explicit TwoParameters(float scale) {
    w = params.add("layer.weight", Tensor::from_vector({2, 3}, {1 * scale, 2, 3, 4, 5, 6 * scale}));
    b = params.add("layer.bias", Tensor::from_vector({3}, {0.1f * scale, 0.2f, 0.3f}));
  }
};

TrainerProgress sample_progress() {
  TrainerProgress p;
  p.step = 1234;
  p.epoch = 3;
  p.batch_index = 17;
  p.rng_seed = 0xFEDCBA9876543210ull;  // above 2^63: must survive as unsigned
  p.rng_counter = 987654321012ull;
  p.elapsed_seconds = 1.0 / 3.0;
  p.best_metric = 27.123456789012345;
  p.has_best = true;
  p.validations_without_improvement = 2;
  p.validated_step = 1000;
  p.skipped_in_a_row = 4;
  return p;
}
}  // namespace

TEST_CASE("trainer state round trip is exact") {
  TempDir dir;
  TwoParameters a(1.0f);
  Adam adam_a(a.params, TrainingConfig{});
  a.w.accumulate_grad(Tensor::from_vector({2, 3}, {0.1f, -0.2f, 0.3f, 0.f, 1e-3f, -7.f}));
  a.b.accumulate_grad(Tensor::from_vector({3}, {0.5f, 0.25f, -0.125f}));
  adam_a.step(0.01f);
  adam_a.step(0.01f);
  save_trainer_state(dir.file("state.safetensors"), a.params, adam_a, sample_progress());

  TwoParameters b(-5.0f);
  Adam adam_b(b.params, TrainingConfig{});
  const TrainerProgress p = load_trainer_state(dir.file("state.safetensors"), b.params, adam_b);
  CHECK(b.w.value().to_vector() == a.w.value().to_vector());
  CHECK(b.b.value().to_vector() == a.b.value().to_vector());
  CHECK(adam_b.steps() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(adam_b.first_moments()[i].to_vector() == adam_a.first_moments()[i].to_vector());
    CHECK(adam_b.second_moments()[i].to_vector() == adam_a.second_moments()[i].to_vector());
  }
  const TrainerProgress want = sample_progress();
  CHECK(p.step == want.step);
  CHECK(p.epoch == want.epoch);
  CHECK(p.batch_index == want.batch_index);
  CHECK(p.rng_seed == want.rng_seed);
  CHECK(p.rng_counter == want.rng_counter);
  CHECK(p.elapsed_seconds == want.elapsed_seconds);  // exact, not approximately
  CHECK(p.best_metric == want.best_metric);
  CHECK(p.has_best == want.has_best);
  CHECK(p.validations_without_improvement == want.validations_without_improvement);
  CHECK(p.validated_step == want.validated_step);
  CHECK(p.skipped_in_a_row == want.skipped_in_a_row);

  // A state written before the count was kept has none skipped.
  SafeTensorFile older = read_safetensors(dir.file("state.safetensors"));
  older.metadata.erase("skipped_in_a_row");
  write_safetensors(dir.file("older.safetensors"), older);
  CHECK(load_trainer_state(dir.file("older.safetensors"), b.params, adam_b).skipped_in_a_row == 0);
}

TEST_CASE("a truncated or corrupt trainer state is a clear error") {
  TempDir dir;
  TwoParameters a(1.0f);
  Adam adam(a.params, TrainingConfig{});
  const std::string good = dir.file("state.safetensors");
  save_trainer_state(good, a.params, adam, sample_progress());
  const std::string bytes = read_file(good);
  REQUIRE(bytes.size() > 100);

  // every kind of cut: inside the length, inside the header, inside the data, one byte short
  for (size_t keep : {size_t{0}, size_t{5}, size_t{20}, bytes.size() / 2, bytes.size() - 1}) {
    INFO("kept " << keep << " of " << bytes.size() << " bytes");
    const std::string cut = dir.file("cut.safetensors");
    write_file_atomic(cut, bytes.substr(0, keep));
    TwoParameters b(2.0f);
    Adam adam_b(b.params, TrainingConfig{});
    CHECK_THROWS_WITH(load_trainer_state(cut, b.params, adam_b), Catch::Contains("cut.safetensors"));
    CHECK_THROWS_AS(load_trainer_state(cut, b.params, adam_b), Error);
  }
  // garbage of a plausible size
  std::string garbage = bytes;
  for (size_t i = 0; i < 16; ++i) garbage[i] = static_cast<char>(0xA5);
  write_file_atomic(dir.file("garbage.safetensors"), garbage);
  CHECK_THROWS_WITH(load_trainer_state(dir.file("garbage.safetensors"), a.params, adam),
                    Catch::Contains("garbage.safetensors") && Catch::Contains("header"));
  // a missing file
  CHECK_THROWS_WITH(load_trainer_state(dir.file("absent.safetensors"), a.params, adam),
                    Catch::Contains("absent.safetensors"));
}

TEST_CASE("a trainer state field that is not exactly a number is an error naming the file and the field") {
  TempDir dir;
  TwoParameters a(1.0f);
  Adam adam(a.params, TrainingConfig{});
  save_trainer_state(dir.file("state.safetensors"), a.params, adam, sample_progress());
  const SafeTensorFile good = read_safetensors(dir.file("state.safetensors"));
  // "12abc" was read as 12, "-1" wrapped to 2^64 - 1, " 7" and "" were read or thrown obscurely
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"step", "12abc"},           {"step", "-1"},         {"batch_index", "-1"},      {"rng_seed", " 7"},
      {"elapsed_seconds", "1.5s"}, {"validated_step", ""}, {"skipped_in_a_row", "two"}};
  for (const auto& [key, value] : bad) {
    INFO(key << " = \"" << value << "\"");
    SafeTensorFile edited = good;
    edited.metadata[key] = value;
    write_safetensors(dir.file("edited.safetensors"), edited);
    CHECK_THROWS_WITH(load_trainer_state(dir.file("edited.safetensors"), a.params, adam),
                      Catch::Contains("edited.safetensors: trainer state field " + key + " is not a"));
  }
  // the written values themselves read back, infinities included
  SafeTensorFile edited = good;
  edited.metadata["best_metric"] = "-inf";
  write_safetensors(dir.file("edited.safetensors"), edited);
  CHECK(load_trainer_state(dir.file("edited.safetensors"), a.params, adam).best_metric ==
        -std::numeric_limits<double>::infinity());
}

TEST_CASE("a parameter file or another model's state is refused as a trainer state") {
  TempDir dir;
  TwoParameters a(1.0f);
  Adam adam(a.params, TrainingConfig{});
  save_parameters(dir.file("model.safetensors"), a.params);
  CHECK_THROWS_WITH(load_trainer_state(dir.file("model.safetensors"), a.params, adam),
                    Catch::Contains("not a heed trainer state"));

  ParameterSet other;
  other.add("layer.weight", Tensor::zeros({3, 2}));  // transposed shape
  other.add("layer.bias", Tensor::zeros({3}));
  Adam adam_other(other, TrainingConfig{});
  save_trainer_state(dir.file("other.safetensors"), other, adam_other, sample_progress());
  CHECK_THROWS_WITH(load_trainer_state(dir.file("other.safetensors"), a.params, adam),
                    Catch::Contains("param.layer.weight") && Catch::Contains("does not match"));
}

TEST_CASE("save_parameters / load_parameters: round trip and clear mismatch errors") {
  TempDir dir;
  TwoParameters a(1.0f), b(3.0f);
  save_parameters(dir.file("p.safetensors"), a.params, {{"step", "42"}});
  CHECK(read_safetensors(dir.file("p.safetensors")).metadata.at("step") == "42");
  load_parameters(dir.file("p.safetensors"), b.params);
  CHECK(b.w.value().to_vector() == a.w.value().to_vector());
  CHECK(b.b.value().to_vector() == a.b.value().to_vector());

  ParameterSet wrong_shape;
  wrong_shape.add("layer.weight", Tensor::zeros({3, 2}));
  wrong_shape.add("layer.bias", Tensor::zeros({3}));
  CHECK_THROWS_WITH(load_parameters(dir.file("p.safetensors"), wrong_shape),
                    Catch::Contains("layer.weight") && Catch::Contains("shape"));
  ParameterSet more;
  more.add("layer.weight", Tensor::zeros({2, 3}));
  more.add("layer.bias", Tensor::zeros({3}));
  more.add("layer.scale", Tensor::zeros({3}));
  CHECK_THROWS_WITH(load_parameters(dir.file("p.safetensors"), more), Catch::Contains("missing tensor layer.scale"));
  ParameterSet fewer;
  fewer.add("layer.weight", Tensor::zeros({2, 3}));
  CHECK_THROWS_WITH(load_parameters(dir.file("p.safetensors"), fewer), Catch::Contains("unexpected tensor layer.bias"));
  // A model that ties layer.bias to another parameter stores it once: a file holding it under the
  // tied name too (trained untied) is refused, not read as the other one. So is a stray scales
  // tensor of that name.
  ParameterSet tied;
  tied.add("layer.weight", Tensor::zeros({2, 3}));
  tied.add("layer.other", Tensor::zeros({3}));
  tied.alias("layer.bias", "layer.other");
  SafeTensorFile untied = read_safetensors(dir.file("p.safetensors"));
  untied.tensors["layer.other"] = untied.tensors.at("layer.bias");
  write_safetensors(dir.file("untied.safetensors"), untied);
  CHECK_THROWS_WITH(load_parameters(dir.file("untied.safetensors"), tied),
                    Catch::Contains("unexpected tensor layer.bias (this model ties it to layer.other"));
  untied.tensors.erase("layer.bias");
  untied.tensors["layer.bias.int8_scales"] = untied.tensors.at("layer.other");
  write_safetensors(dir.file("scales.safetensors"), untied);
  CHECK_THROWS_WITH(load_parameters(dir.file("scales.safetensors"), tied),
                    Catch::Contains("unexpected tensor layer.bias.int8_scales (not a parameter"));

  const std::string bytes = read_file(dir.file("p.safetensors"));
  write_file_atomic(dir.file("cut.safetensors"), bytes.substr(0, bytes.size() - 4));
  CHECK_THROWS_WITH(load_parameters(dir.file("cut.safetensors"), b.params), Catch::Contains("cut.safetensors"));
}
