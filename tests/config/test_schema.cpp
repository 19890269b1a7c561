// configs/ stays in sync with the C++ field table: the schema, the field reference and the
// shipped example configs.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "config/config.hpp"

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path configs_dir() { return fs::path(HEED_SOURCE_DIR) / "configs"; }

// "a.b.c" for every leaf of a config JSON.
void leaf_paths(const json& j, const std::string& prefix, std::vector<std::string>& out) {
  for (const auto& [key, value] : j.items()) {
    std::string path = prefix.empty() ? key : prefix + "." + key;
    if (value.is_object())
      leaf_paths(value, path, out);
    else
      out.push_back(path);
  }
}

// The defaults the schema declares, as a config JSON.
json schema_defaults(const json& schema) {
  json out = json::object();
  for (const auto& [key, prop] : schema.at("properties").items())
    out[key] = prop.contains("properties") ? schema_defaults(prop) : prop.at("default");
  return out;
}

}  // namespace

TEST_CASE("configs/schema.json is the output of `heed config schema`") {
  json file = json::parse(slurp(configs_dir() / "schema.json"));
  INFO("regenerate with: heed config schema > configs/schema.json");
  CHECK(file == heed::config_schema());
}

TEST_CASE("the schema has every field with its C++ default, and nothing else") {
  CHECK(schema_defaults(heed::config_schema()) == heed::to_json(heed::default_config()));
}

TEST_CASE("configs/README.md documents every field") {
  std::string readme = slurp(configs_dir() / "README.md");
  std::vector<std::string> paths;
  leaf_paths(heed::to_json(heed::default_config()), "", paths);
  REQUIRE(paths.size() > 50);
  for (const auto& path : paths) {
    INFO(path);
    CHECK(readme.find("| `" + path + "` |") != std::string::npos);
  }
}

TEST_CASE("every shipped config loads") {
  int loaded = 0;
  for (const auto& entry : fs::directory_iterator(configs_dir())) {
    if (entry.path().extension() != ".json" || entry.path().filename() == "schema.json") continue;
    INFO(entry.path().string());
    CHECK_NOTHROW(heed::load_config(entry.path().string()));
    ++loaded;
  }
  CHECK(loaded >= 2);
}

TEST_CASE("the example configs differ from the defaults only where documented") {
  heed::Config gru = heed::load_config((configs_dir() / "gru-bahdanau.json").string());
  heed::Config expected = heed::default_config();
  expected.model_dir = "runs/gru-bahdanau";
  expected.data.train_src = {"data/train.en"};
  expected.data.train_tgt = {"data/train.de"};
  expected.data.dev_src = "data/dev.en";
  expected.data.dev_tgt = "data/dev.de";
  // the recipes for 30 minutes (README: recipes for a time budget)
  expected.training.max_time = 1800;
  expected.training.average_last = 3;
  expected.model.share_embeddings = true;   // the embeddings sweeps (both recipes share)
  expected.model.gru.tie_output = true;     // the GRU's embeddings sweep
  expected.training.batch_tokens = 1000;    // the batch sweeps at equal time (both recipes)
  expected.training.validate_every = 1000;  // twice the updates of the larger batch: as few validations
  expected.model.gru.enc_hidden = 384;      // the size sweep at equal time and two recipe runs
  expected.model.gru.dec_hidden = 384;
  expected.model.gru.attn_dim = 384;
  CHECK(gru == expected);

  heed::Config transformer = heed::load_config((configs_dir() / "transformer.json").string());
  expected.model_dir = "runs/transformer";
  expected.model.arch = heed::Arch::transformer;
  expected.training.learning_rate = 1e-3f;
  expected.training.schedule = heed::ScheduleKind::linear;
  expected.training.warmup_steps = 500;
  expected.training.beta2 = 0.98f;
  expected.training.eps = 1e-9f;
  expected.decoding.length_penalty = 0.6f;
  expected.model.dropout = 0;             // the dropout sweep at the 30-minute update count
  expected.model.gru = heed::default_config().model.gru;  // GRU fields: the Transformer keeps the defaults
  CHECK(transformer == expected);
}
