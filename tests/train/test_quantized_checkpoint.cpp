// int8 parameter files: which tensors become int8, that loading dequantizes them within half a
// scale step, that the file is much smaller, that damaged int8 files are clear errors, and that
// a model's decoding with int8 step products stays close to its fp32 decoding (also inside a
// StepWeightsHold, as translation decodes, where the GRU's encoder recurrence is int8 too).
#include <catch2/catch.hpp>

#include "../temp_dir.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "../fixtures/tiny_models.hpp"
#include "decode/beam_search.hpp"
#include "io/safetensors.hpp"
#include "models/factory.hpp"
#include "models/seq2seq.hpp"
#include "tensor/quantize.hpp"
#include "train/checkpoint.hpp"
#include "util/error.hpp"

using namespace heed;
namespace fs = std::filesystem;

namespace {

ModelConfig mid_sized(Arch arch) {  // sizes where the matrices dominate, as in real models
  ModelConfig c = test::tiny_model_config(arch);
  c.gru.emb_dim = 64;
  c.gru.enc_hidden = 64;
  c.gru.dec_hidden = 64;
  c.gru.attn_dim = 64;
  c.gru.readout_dim = 64;
  c.transformer.d_model = 64;
  c.transformer.ffn_dim = 128;
  return c;
}

// How far b is from a (same shape): the largest |a - b|, the largest |a|, and the sum of |a - b|.
struct Difference {
  double worst = 0, largest = 0, total = 0;
};

Difference difference(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  const Tensor x = a.contiguous(), y = b.contiguous();
  Difference d;
  for (int64_t i = 0; i < x.numel(); ++i) {
    d.worst = std::max(d.worst, double(std::fabs(x.data()[i] - y.data()[i])));
    d.largest = std::max(d.largest, double(std::fabs(x.data()[i])));
    d.total += std::fabs(x.data()[i] - y.data()[i]);
  }
  return d;
}

}  // namespace

TEST_CASE("an int8 file holds int8 rows and scales for the large matrices and F32 for the rest", "[int8]") {
  test::TempDir dir("quantized-checkpoint");
  for (Arch arch : {Arch::gru_bahdanau, Arch::transformer}) {
    const int vocab = 1000;
    auto model = make_model(mid_sized(arch), vocab, vocab, 5);
    const std::string fp32 = dir / "fp32.safetensors", int8 = dir / "int8.safetensors";
    save_parameters(fp32, model->parameters());
    save_parameters(int8, model->parameters(), {}, true);
    const double ratio = double(fs::file_size(fp32)) / double(fs::file_size(int8));
    INFO(name_of(arch) << ": " << ratio << "x smaller");
    CHECK(ratio >= 3.5);

    const SafeTensorFile file = read_safetensors(int8);
    CHECK(file.metadata.at("precision") == "int8");
    int int8_tensors = 0;
    for (const auto& [name, var] : model->parameters().all()) {
      const SafeTensor& t = file.at(name);
      if (quantizable(var.value())) {
        ++int8_tensors;
        CHECK(t.dtype == "I8");
        CHECK(file.at(name + kInt8ScalesSuffix).shape == std::vector<int64_t>{var.value().dim(0)});
      } else {
        CHECK(t.dtype == "F32");  // biases, norms, vectors
        CHECK(file.tensors.count(name + kInt8ScalesSuffix) == 0);
      }
    }
    CHECK(int8_tensors >= 5);

    auto loaded = make_model(mid_sized(arch), vocab, vocab, 99);
    CHECK(load_parameters(int8, loaded->parameters()));
    CHECK_FALSE(load_parameters(fp32, make_model(mid_sized(arch), vocab, vocab, 1)->parameters()));
    for (const auto& [name, var] : model->parameters().all()) {
      const Tensor original = var.value().contiguous(), back = loaded->parameters().get(name).value().contiguous();
      if (!quantizable(original)) {
        CHECK(original.to_vector() == back.to_vector());
        continue;
      }
      const QuantizedRows q = quantize_rows(original);
      for (int64_t r = 0; r < q.rows; ++r)
        for (int64_t c = 0; c < q.cols; ++c)
          REQUIRE(std::fabs(back.data()[r * q.cols + c] - original.data()[r * q.cols + c]) <=
                  q.scales[r] / 2 * 1.0001f);
    }
  }
}

TEST_CASE("damaged int8 files are clear errors", "[int8]") {
  test::TempDir dir("quantized-damaged");
  const int vocab = 100;
  auto model = make_model(mid_sized(Arch::transformer), vocab, vocab, 5);
  const std::string path = dir / "int8.safetensors";
  save_parameters(path, model->parameters(), {}, true);
  const SafeTensorFile good = read_safetensors(path);
  const std::string name = "decoder.layers.0.linear1.weight";
  REQUIRE(good.at(name).dtype == "I8");

  SafeTensorFile no_scales = good;
  no_scales.tensors.erase(name + kInt8ScalesSuffix);
  write_safetensors(path, no_scales);
  CHECK_THROWS_WITH(load_parameters(path, model->parameters()),
                    Catch::Contains("int8 tensor " + name + " has no scales"));

  SafeTensorFile bad_scales = good;
  bad_scales.tensors[name + kInt8ScalesSuffix] = SafeTensor::from_f32({3}, {1, 2, 3});
  write_safetensors(path, bad_scales);
  CHECK_THROWS_WITH(load_parameters(path, model->parameters()), Catch::Contains("one value per row"));

  SafeTensorFile zero_scale = good;
  std::vector<float> scales = good.at(name + kInt8ScalesSuffix).as_f32();
  scales[2] = 0;
  zero_scale.tensors[name + kInt8ScalesSuffix] = SafeTensor::from_f32({int64_t(scales.size())}, scales);
  write_safetensors(path, zero_scale);
  CHECK_THROWS_WITH(load_parameters(path, model->parameters()), Catch::Contains("a scale that is not > 0"));

  SafeTensorFile stray = good;
  stray.tensors["nothing.int8_scales"] = SafeTensor::from_f32({1}, {1});
  write_safetensors(path, stray);
  CHECK_THROWS_WITH(load_parameters(path, model->parameters()), Catch::Contains("unexpected tensor nothing.int8_scales"));
}

TEST_CASE("int8 step products give logits close to fp32 ones, step after step", "[int8]") {
  const int vocab = 200;
  for (Arch arch : {Arch::gru_bahdanau, Arch::transformer}) {
    auto model = make_model(mid_sized(arch), vocab, vocab, 8);
    const EvalMode eval(*model);
    NoGradGuard no_grad;
    const Batch batch = make_batch({{5, 9, 13, 7, 22}, {30, 4, 100, 150}, {6, 6, 8}}, {});
    model->set_step_precision(StepPrecision::fp32);
    auto fp32 = model->begin(batch);
    model->set_step_precision(StepPrecision::int8);
    auto int8 = model->begin(batch);
    std::vector<int32_t> previous(3, kBosId);
    for (int t = 0; t < 5; ++t) {
      const Tensor a = model->step(*fp32, previous).logits.contiguous();
      const Tensor b = model->step(*int8, previous).logits.contiguous();
      double worst = 0, largest = 0, total = 0;
      for (int64_t i = 0; i < a.numel(); ++i) {
        worst = std::max(worst, double(std::fabs(a.data()[i] - b.data()[i])));
        largest = std::max(largest, double(std::fabs(a.data()[i])));
        total += std::fabs(a.data()[i] - b.data()[i]);
      }
      INFO(name_of(arch) << " step " << t << ": worst difference " << worst << " of logits up to " << largest);
      CHECK(total > 0);                 // the int8 path ran
      CHECK(worst <= 0.03 * largest);  // and stayed within a few per cent of the logits' range
      previous = {int32_t(10 + t), int32_t(50 + 3 * t), int32_t(199 - t)};
    }
  }
}

TEST_CASE("inside a hold, the GRU's int8 encoder recurrence and int8 steps stay close to fp32", "[int8]") {
  // Translation decodes inside a StepWeightsHold, and for the GRU the hold also packs the
  // encoder's recurrent weights for the step precision: encode() then runs its recurrence on int8
  // products. Both precisions decode the same inputs, each inside its own hold.
  const int vocab = 200;
  auto model = make_model(mid_sized(Arch::gru_bahdanau), vocab, vocab, 8);
  REQUIRE(model->has_step_weights());
  const EvalMode eval(*model);
  NoGradGuard no_grad;
  const Batch batch = make_batch({{5, 9, 13, 7, 22}, {30, 4, 100, 150}, {6, 6, 8}}, {});
  // The encoder states [B, S, 2H], then the logits of five steps.
  auto decode_held = [&](StepPrecision precision) {
    model->set_step_precision(precision);  // takes effect when the hold prepares the weights
    const StepWeightsHold hold(*model);
    std::vector<Tensor> out;
    const EncoderOutput encoded = model->encode(batch);
    out.push_back(encoded.states.value().contiguous());
    auto state = model->start(encoded);
    std::vector<int32_t> previous(3, kBosId);
    for (int t = 0; t < 5; ++t) {
      out.push_back(model->step(*state, previous).logits.contiguous());
      previous = {int32_t(10 + t), int32_t(50 + 3 * t), int32_t(199 - t)};
    }
    return out;
  };
  const std::vector<Tensor> fp32 = decode_held(StepPrecision::fp32);
  const std::vector<Tensor> int8 = decode_held(StepPrecision::int8);
  model->set_step_precision(StepPrecision::fp32);
  REQUIRE(fp32.size() == 6);
  REQUIRE(int8.size() == fp32.size());
  for (size_t k = 0; k < fp32.size(); ++k) {
    const std::string what = k == 0 ? std::string("encoder states") : "step " + std::to_string(k - 1) + " logits";
    const Difference d = difference(fp32[k], int8[k]);
    INFO(what << ": worst difference " << d.worst << " of values up to " << d.largest);
    CHECK(d.total > 0);                  // the int8 path ran (for the encoder states: the held int8 recurrence)
    CHECK(d.worst <= 0.03 * d.largest);  // and stayed within a few per cent of the values' range
  }
}
