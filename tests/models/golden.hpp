#pragma once
// Loading the PyTorch reference's golden files (tests/fixtures/golden, see its README) into heed
// models, and the comparisons its README asks for.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>

#include "io/safetensors.hpp"
#include "models/seq2seq.hpp"
#include "tokens/batch.hpp"

namespace heed::golden {

inline SafeTensorFile load(const std::string& name) {
  return read_safetensors(std::string(HEED_TEST_FIXTURES) + "/golden/" + name + ".safetensors");
}

inline int meta_int(const SafeTensorFile& f, const std::string& key) { return std::stoi(f.metadata.at(key)); }

inline std::vector<int32_t> ids(const SafeTensorFile& f, const std::string& name) {
  std::vector<int32_t> out;
  for (auto v : f.at(name).as_i64()) out.push_back(static_cast<int32_t>(v));
  return out;
}

inline Batch batch(const SafeTensorFile& f) {
  Batch b;
  const auto& src = f.at("batch.src");
  const auto& tgt = f.at("batch.tgt_in");
  b.size = static_cast<int>(src.shape[0]);
  b.src_len = static_cast<int>(src.shape[1]);
  b.tgt_len = static_cast<int>(tgt.shape[1]);
  b.src = ids(f, "batch.src");
  b.tgt_in = ids(f, "batch.tgt_in");
  b.tgt_out = ids(f, "batch.tgt_out");
  b.src_lengths = ids(f, "batch.src_lengths");
  auto mask = f.at("batch.label_mask").as_bool();
  for (int i = 0; i < b.size; ++i) {
    int n = 0;
    for (int t = 0; t < b.tgt_len; ++t) n += mask[i * b.tgt_len + t];
    b.tgt_lengths.push_back(n);
  }
  for (int i = 0; i < b.size; ++i) b.indices.push_back(i);
  return b;
}

// Copies every param.<name> into the model's parameter of the same name (shapes must agree).
inline void load_parameters(Seq2Seq& model, const SafeTensorFile& f) {
  for (const auto& [name, var] : model.parameters().all()) {
    INFO("parameter " << name);
    const auto& t = f.at("param." + name);
    REQUIRE(Shape(t.shape.begin(), t.shape.end()) == var.shape());
    auto values = t.as_f32();
    std::copy(values.begin(), values.end(), var.value().data());
  }
}

inline float max_abs(const std::vector<float>& v) {
  float m = 0;
  for (float x : v) m = std::max(m, std::fabs(x));
  return m;
}

// max |ours − golden| ≤ rel · max |golden| + abs_tol (the README's rule for gradients).
inline void require_close(const std::string& what, const Tensor& ours, const SafeTensor& golden, float rel,
                          float abs_tol) {
  INFO(what);
  REQUIRE(ours.shape() == Shape(golden.shape.begin(), golden.shape.end()));
  auto g = golden.as_f32();
  auto o = ours.to_vector();
  float worst = 0;
  for (size_t i = 0; i < g.size(); ++i) worst = std::max(worst, std::fabs(o[i] - g[i]));
  const float bound = rel * max_abs(g) + abs_tol;
  INFO("max |diff| " << worst << " bound " << bound);
  CHECK(worst <= bound);
}

}  // namespace heed::golden
