// Config parsing: defaults, every kind of error (with the exact path), overrides, round trips.
#include <unistd.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

#include "config/config.hpp"
#include "util/error.hpp"

using heed::Config;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A scratch directory for this process, removed at exit.
struct ScratchDir {
  fs::path path = fs::temp_directory_path() / ("heed_test_config_" + std::to_string(getpid()));
  ScratchDir() { fs::create_directories(path); }
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

fs::path temp_dir() {
  static ScratchDir dir;
  return dir.path;
}

std::string write_temp(const std::string& name, const std::string& text) {
  auto path = (temp_dir() / name).string();
  std::ofstream(path) << text;
  return path;
}

// The message of the heed::UsageError thrown by `f` (fails the test if none is thrown).
std::string usage_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const heed::UsageError& e) {
    return e.what();
  }
  FAIL("expected heed::UsageError");
  return "";
}

std::string error_for(const json& j) {
  return usage_error([&] { heed::config_from_json(j, "test.json"); });
}

}  // namespace

TEST_CASE("defaults are the documented values") {
  Config c = heed::default_config();
  CHECK(c.model_dir == "");
  CHECK(c.seed == 1);
  CHECK(c.model.arch == heed::Arch::gru_bahdanau);
  CHECK(c.model.dropout == 0.1f);
  CHECK(c.model.gru.enc_hidden == 512);
  CHECK(c.model.gru.readout_act == heed::ReadoutActivation::tanh);
  CHECK(c.model.transformer.heads == 4);
  CHECK(c.model.transformer.activation == heed::FeedForwardActivation::relu);
  CHECK(c.data.train_src.empty());
  CHECK(c.data.max_length == 100);
  CHECK(c.tokenizer.vocab_size == 8000);
  CHECK(c.tokenizer.character_coverage == 0.9995);
  CHECK(c.training.learning_rate == 1e-3f);
  CHECK(c.training.schedule == heed::ScheduleKind::constant);
  CHECK(c.training.validate_every == 1000);
  CHECK(c.decoding.beam == 5);
  CHECK(c.decoding.max_length_offset == 10);
  // An empty file means all defaults.
  CHECK(heed::config_from_json(json::object(), "empty") == c);
  CHECK(heed::load_config("") == c);
}

TEST_CASE("fields are read from their sections") {
  json j = json::parse(R"({
    "seed": 7, "model_dir": "runs/x",
    "model": {"arch": "transformer", "transformer": {"d_model": 128, "heads": 8, "pre_norm": true}},
    "data": {"train": {"src": "a.en", "tgt": ["a.de"]}, "dev": {"src": "d.en", "tgt": "d.de"}},
    "training": {"learning_rate": 0.0005, "max_time": "1h30m"},
    "decoding": {"beam": 1}
  })");
  Config c = heed::config_from_json(j, "test.json");
  CHECK(c.seed == 7);
  CHECK(c.model_dir == "runs/x");
  CHECK(c.model.arch == heed::Arch::transformer);
  CHECK(c.model.transformer.d_model == 128);
  CHECK(c.model.transformer.heads == 8);
  CHECK(c.model.transformer.pre_norm);
  CHECK(c.data.train_src == std::vector<std::string>{"a.en"});  // a single string is a list of one
  CHECK(c.data.train_tgt == std::vector<std::string>{"a.de"});
  CHECK(c.data.dev_tgt == "d.de");
  CHECK(c.training.learning_rate == 0.0005f);
  CHECK(c.training.max_time == 5400);
  CHECK(c.decoding.beam == 1);
  CHECK(c.training.batch_tokens == 2000);  // untouched fields keep their defaults
}

TEST_CASE("max_time accepts seconds or a duration string") {
  auto seconds = [](const json& v) {
    return heed::config_from_json({{"training", {{"max_time", v}}}}, "t").training.max_time;
  };
  CHECK(seconds(120) == 120);
  CHECK(seconds(2.5) == 2.5);
  CHECK(seconds("90s") == 90);
  CHECK(seconds("15m") == 900);
  CHECK(seconds("2h") == 7200);
  CHECK(seconds("1.5h") == 5400);
  for (json bad : {json("15"), json("15x"), json("m"), json(""), json(-1), json(true)})
    CHECK_THAT(
        error_for({{"training", {{"max_time", bad}}}}),
        Catch::StartsWith("test.json: training.max_time: got " + bad.dump() + ", expected a number of seconds >= 0"));
}

TEST_CASE("a syntax error names file, line and column") {
  auto path = write_temp("syntax.json", "{\n  \"seed\": 1,\n  \"model\": {\"arch\" \"x\"}\n}\n");
  std::string message = usage_error([&] { heed::load_config(path); });
  CHECK_THAT(message, Catch::StartsWith(path + ":3:22: syntax error while parsing object separator"));

  auto trailing = write_temp("trailing.json", "{\n  \"seed\": 1,\n}\n");
  CHECK_THAT(usage_error([&] { heed::load_config(trailing); }), Catch::StartsWith(trailing + ":3:1: syntax error"));

  auto empty = write_temp("empty.json", "");
  CHECK_THAT(usage_error([&] { heed::load_config(empty); }), Catch::StartsWith(empty + ":1:1: syntax error"));
}

TEST_CASE("a number beyond every numeric type is a config error (found by fuzz_config)") {
  CHECK_THROWS_AS(heed::config_from_text("{\"seed\": 1e999}", "big.json"), heed::UsageError);
  CHECK_THROWS_WITH(heed::config_from_text("{\"seed\": 1e999}", "big.json"),
                    "big.json: number overflow parsing '1e999'");
}

TEST_CASE("an override that is not UTF-8 is a config error (found by fuzz_config)") {
  CHECK_THROWS_WITH(heed::config_from_text("{}", "x.json", {"model.gru.enc_layers=\xff"}),
                    "--set model.gru.enc_layers: the value is not valid UTF-8");
  CHECK_THROWS_AS(heed::config_from_text("{}", "x.json", {"data.dev.src=a\xC3("}), heed::UsageError);
}

TEST_CASE("a config nested deeper than 64 levels is refused, not a crash (its error message would dump it)") {
  const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
  CHECK_THROWS_WITH(heed::config_from_text(deep, "deep.json"), "deep.json: nested more than 64 levels deep");
  CHECK_THROWS_WITH(heed::config_from_text(R"({"model": {"gru": )" + deep + "}}", "deep.json"),
                    "deep.json: nested more than 64 levels deep");
  std::string sixty_four = std::string(63, '[') + std::string(63, ']');
  CHECK_THROWS_WITH(heed::config_from_text(R"({"seed": )" + sixty_four + "}", "x.json"),
                    Catch::StartsWith("x.json: seed: got [[[[[["));  // a wrong type, named as usual
}

TEST_CASE("a config of many keys is read in linear time") {
  // 200,000 distinct keys in one object: the duplicate check is a hash set, so this takes well
  // under a second (as a list it took minutes); the first unknown key is the error.
  std::string text = R"({"training": {)";
  for (int i = 0; i < 200000; ++i) text += (i ? ", \"k" : "\"k") + std::to_string(i) + "\": 1";
  text += "}}";
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(heed::config_from_text(text, "keys.json"), Catch::StartsWith("keys.json: unknown key 'training.k"));
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 5);
}

TEST_CASE("file-level errors") {
  CHECK_THAT(usage_error([] { heed::load_config("no/such/config.json"); }),
             Catch::Contains("cannot read no/such/config.json"));
  CHECK_THAT(usage_error([] { heed::load_config(temp_dir().string()); }), Catch::EndsWith("is a directory"));
  const auto loop = temp_dir() / "loop.json";  // a path whose status cannot be read: still a config error
  std::filesystem::remove(loop);
  std::filesystem::create_symlink(loop, loop);
  CHECK_THAT(usage_error([&] { heed::load_config(loop.string()); }), Catch::Contains("cannot read " + loop.string()));
  auto array = write_temp("array.json", "[1, 2]");
  CHECK(usage_error([&] { heed::load_config(array); }) ==
        array + ": expected a JSON object at the top level, got [1,2]");
  auto dup = write_temp("dup.json", R"({"training": {"learning_rate": 0.1, "batch_tokens": 5, "learning_rate": 0.2}})");
  CHECK(usage_error([&] { heed::load_config(dup); }) == dup + ": duplicate key 'training.learning_rate'");
}

TEST_CASE("an unknown key names its full path and the closest known key") {
  CHECK(error_for({{"training", {{"lerning_rate", 0.1}}}}) ==
        "test.json: unknown key 'training.lerning_rate' (did you mean training.learning_rate?)");
  CHECK(error_for({{"model", {{"gru", {{"emb_dimm", 5}}}}}}) ==
        "test.json: unknown key 'model.gru.emb_dimm' (did you mean model.gru.emb_dim?)");
  CHECK(error_for({{"modle", json::object()}}) == "test.json: unknown key 'modle' (did you mean model?)");
  // The right name in the wrong section.
  CHECK(error_for({{"training", {{"beam", 4}}}}) ==
        "test.json: unknown key 'training.beam' (did you mean decoding.beam?)");
  CHECK(error_for({{"data", {{"train", {{"source", "a"}}}}}}) ==
        "test.json: unknown key 'data.train.source' (did you mean data.train.src?)");
  // Nothing close: no guess. Comment keys are not special: configs/README.md documents the fields.
  CHECK(error_for({{"completely_unrelated_thing", 1}}) == "test.json: unknown key 'completely_unrelated_thing'");
  CHECK_THAT(error_for({{"//", "a comment"}}), Catch::StartsWith("test.json: unknown key '//'"));
}

TEST_CASE("a wrong type names the path, the value and what is allowed") {
  CHECK(error_for({{"training", {{"batch_tokens", "2000"}}}}) ==
        "test.json: training.batch_tokens: got \"2000\", expected an integer >= 1");
  CHECK(error_for({{"training", {{"batch_tokens", 1.5}}}}) ==
        "test.json: training.batch_tokens: got 1.5, expected an integer >= 1");
  CHECK(error_for({{"model", {{"share_embeddings", "yes"}}}}) ==
        "test.json: model.share_embeddings: got \"yes\", expected true or false");
  CHECK(error_for({{"model", 3}}) == "test.json: model: got 3, expected an object (a section)");
  CHECK(error_for({{"data", {{"train", {{"src", {"a", 1}}}}}}}) ==
        "test.json: data.train.src: got [\"a\",1], expected a string or a list of strings");
  CHECK(error_for({{"tokenizer", {{"path", nullptr}}}}) == "test.json: tokenizer.path: got null, expected a string");
  CHECK(error_for({{"seed", -1}}) == "test.json: seed: got -1, expected an integer >= 0");
  CHECK(error_for(json::parse("[]")) == "test.json: expected a JSON object at the top level, got []");
}

TEST_CASE("an out-of-range value names the path, the value and what is allowed") {
  CHECK(error_for({{"model", {{"dropout", 1.0}}}}) ==
        "test.json: model.dropout: got 1.0, expected a number >= 0 and < 1");
  CHECK(error_for({{"model", {{"dropout", -0.1}}}}) ==
        "test.json: model.dropout: got -0.1, expected a number >= 0 and < 1");
  CHECK(error_for({{"training", {{"learning_rate", 0}}}}) ==
        "test.json: training.learning_rate: got 0, expected a number > 0");
  CHECK(error_for({{"decoding", {{"beam", 0}}}}) ==
        "test.json: decoding.beam: got 0, expected an integer >= 1 and <= 1000");
  CHECK(error_for({{"tokenizer", {{"vocab_size", 100}}}}) ==
        "test.json: tokenizer.vocab_size: got 100, expected an integer >= 261");
  CHECK(error_for({{"tokenizer", {{"character_coverage", 0}}}}) ==
        "test.json: tokenizer.character_coverage: got 0, expected a number > 0 and <= 1");
  CHECK(error_for({{"model", {{"arch", "rnn"}}}}) ==
        "test.json: model.arch: got \"rnn\", expected one of \"gru-bahdanau\", \"transformer\", \"ntm\", \"gat\"");
  CHECK(error_for({{"training", {{"schedule", "step"}}}}) ==
        "test.json: training.schedule: got \"step\", expected one of \"constant\", \"inverse-sqrt\", \"linear\", "
        "\"cosine\"");
  CHECK(error_for({{"training", {{"max_steps", 3000000000LL}}}}) ==
        "test.json: training.max_steps: got 3000000000, expected an integer >= 0 that fits in 32 bits");
  CHECK(error_for({{"training", {{"beta2", 1e300}}}}) ==
        "test.json: training.beta2: got 1e+300, expected a number >= 0 and < 1");
  CHECK(error_for({{"decoding", {{"validation_beam", 1001}}}}) ==
        "test.json: decoding.validation_beam: got 1001, expected an integer >= 1 and <= 1000");
  CHECK(error_for({{"training", {{"reduce_bucket_mb", 1e20}}}}) ==
        "test.json: training.reduce_bucket_mb: got 1e+20, expected a number > 0 and <= 8191");
}

TEST_CASE("a float field checks the value it stores, not the double it was given") {
  // In range as doubles, out of range as floats: a beta of 1 or a temperature of 0 makes NaNs.
  CHECK(error_for({{"training", {{"beta2", 0.99999999}}}}) ==
        "test.json: training.beta2: got 0.99999999, expected a number >= 0 and < 1");
  CHECK(error_for({{"model", {{"dropout", 0.99999999}}}}) ==
        "test.json: model.dropout: got 0.99999999, expected a number >= 0 and < 1");
  CHECK(error_for({{"decoding", {{"temperature", 1e-50}}}}) ==
        "test.json: decoding.temperature: got 1e-50, expected a number > 0");
  // The largest float below 1 is kept as it is.
  const Config c = heed::config_from_json({{"training", {{"beta2", 0.99999994}}}}, "test.json");
  CHECK(c.training.beta2 == std::nextafter(1.0f, 0.0f));
}

TEST_CASE("edge shares are held as given: 0.35 of 20 edges is 7") {
  const Config c = heed::config_from_json({{"data", {{"val_edges", 0.35}, {"test_edges", 0.15}}}}, "test.json");
  CHECK(std::floor(c.data.val_edges * 20) == 7);
  CHECK(std::floor(c.data.test_edges * 20) == 3);
}

TEST_CASE("a key holding a dot is refused: it would escape the duplicate check and --set") {
  CHECK(error_for({{"training", {{"learning_rate", 0.1}}}, {"training.learning_rate", 0.2}}) ==
        "test.json: key 'training.learning_rate': a key names one field or section; nest it as "
        "{\"training\": {\"learning_rate\": ...}}");
  CHECK(error_for({{"model", {{"gru.emb_dim", 8}}}}) ==
        "test.json: key 'model.gru.emb_dim': a key names one field or section; nest it as "
        "{\"gru\": {\"emb_dim\": ...}}");
}

TEST_CASE("rules across fields name every field involved") {
  CHECK(error_for({{"model", {{"transformer", {{"d_model", 250}}}}}}) ==
        "test.json: model.transformer.d_model (250) must be a multiple of model.transformer.heads (4)");
  CHECK(error_for({{"model", {{"gru", {{"tie_output", true}, {"readout_dim", 512}}}}}}) ==
        "test.json: model.gru.tie_output needs model.gru.readout_dim (512) == model.gru.emb_dim (256)");
  CHECK(heed::config_from_json({{"model", {{"gru", {{"tie_output", true}}}}}}, "t").model.gru.tie_output);
  CHECK_THAT(error_for({{"model", {{"share_embeddings", true}}}, {"tokenizer", {{"joint", false}}}}),
             Catch::StartsWith("test.json: model.share_embeddings needs tokenizer.joint = true"));
  CHECK(error_for({{"data", {{"train", {{"src", {"a", "b"}}, {"tgt", "c"}}}}}}) ==
        "test.json: data.train.src has 2 file(s) but data.train.tgt has 1; they must pair up");
  CHECK(error_for({{"data", {{"dev", {{"src", "d.en"}}}}}}) ==
        "test.json: data.dev.src and data.dev.tgt must be given together");
  CHECK(error_for({{"data", {{"max_length_ratio", 0.5}}}}) ==
        "test.json: data.max_length_ratio: got 0.5, expected 0 (off) or a number >= 1");
  CHECK(error_for({{"training", {{"schedule", "inverse-sqrt"}}}}) ==
        "test.json: training.warmup_steps: the inverse-sqrt schedule needs warmup_steps >= 1 (got 0)");
  // Checked when the config loads, not at the first update after the corpus has loaded.
  CHECK(
      error_for({{"training", {{"schedule", "cosine"}}}}) ==
      "test.json: training.schedule cosine needs training.max_steps or training.max_time > 0 (it decays to "
      "min_learning_rate at the end of that budget)");
  CHECK(
      error_for({{"training", {{"schedule", "linear"}, {"max_steps", 0}}}}) ==
      "test.json: training.schedule linear needs training.max_steps or training.max_time > 0 (it decays to "
      "min_learning_rate at the end of that budget)");
  CHECK(error_for({{"decoding", {{"beam", 0}}}}) ==
        "test.json: decoding.beam: got 0, expected an integer >= 1 and <= 1000");
  CHECK(error_for({{"decoding", {{"length_penalty", -1}}}}) ==
        "test.json: decoding.length_penalty: got -1, expected a number >= 0");
  CHECK(error_for({{"decoding", {{"beam", 2}, {"nbest", 3}}}}) ==
        "test.json: decoding.nbest 3 needs a beam at least as wide (decoding.beam is 2)");
  CHECK(error_for({{"training", {{"min_learning_rate", 0.01}}}}) ==
        "test.json: training.min_learning_rate must not exceed training.learning_rate");
  CHECK(error_for({{"model", {{"arch", "ntm"}, {"ntm", {{"memory_rows", 8}, {"shift_width", 1073741824}}}}}}) ==
        "test.json: model.ntm.shift_width (1073741824) must be less than model.ntm.memory_rows (8): shifts wrap "
        "around the memory");
  CHECK(heed::config_from_json({{"model", {{"arch", "ntm"}, {"ntm", {{"memory_rows", 8}, {"shift_width", 7}}}}}}, "t")
            .model.ntm.shift_width == 7);
  CHECK(error_for({{"task", "node-classification"}}) ==
        "test.json: task node-classification needs model.arch = gat (got gru-bahdanau)");
  CHECK(error_for({{"model", {{"arch", "gat"}}}}) ==
        "test.json: model.arch gat is a graph model: set task to node-classification or link-prediction");
  CHECK(error_for({{"task", "link-prediction"},
                   {"model", {{"arch", "gat"}}},
                   {"data", {{"val_edges", 0.5}, {"test_edges", 0.5}}}}) ==
        "test.json: data.val_edges + data.test_edges must leave edges for training (got 0.5 + 0.5)");
  CHECK(heed::config_from_json({{"task", "link-prediction"}, {"model", {{"arch", "gat"}}}}, "t").task ==
        heed::Task::link_prediction);
}

TEST_CASE("fixed choices are parsed into enums when the config loads") {
  const Config c = heed::config_from_json(
      {{"model",
        {{"arch", "transformer"}, {"gru", {{"readout_act", "linear"}}}, {"transformer", {{"activation", "gelu"}}}}},
       {"training",
        {{"optimizer", "adamw"},
         {"schedule", "inverse-sqrt"},
         {"warmup_steps", 4},
         {"batch_unit", "target"},
         {"validation_metric", "cross-entropy"}}}},
      "test.json");
  CHECK(c.model.arch == heed::Arch::transformer);
  CHECK(c.model.gru.readout_act == heed::ReadoutActivation::linear);
  CHECK(c.model.transformer.activation == heed::FeedForwardActivation::gelu);
  CHECK(c.training.optimizer == heed::OptimizerKind::adamw);
  CHECK(c.training.schedule == heed::ScheduleKind::inverse_sqrt);
  CHECK(c.training.batch_unit == heed::BatchUnit::target);
  CHECK(c.training.validation_metric == heed::ValidationMetric::cross_entropy);
  CHECK(heed::name_of(c.training.schedule) == "inverse-sqrt");
  CHECK(heed::name_of(c.training.validation_metric) == "cross-entropy");
  CHECK(heed::to_json(c)["training"]["batch_unit"] == "target");
  CHECK(error_for({{"training", {{"batch_unit", "tokens"}}}}) ==
        "test.json: training.batch_unit: got \"tokens\", expected one of \"padded\", \"target\"");
}

TEST_CASE("--set overrides are applied in order and validated the same way") {
  auto path = write_temp("base.json", R"({"training": {"learning_rate": 0.1, "batch_tokens": 500}})");
  Config c = heed::load_config(path, {"training.learning_rate=0.0005", "model.arch=transformer",
                                      "data.train.src=[\"a.en\",\"b.en\"]", "data.train.tgt=[\"a.de\",\"b.de\"]",
                                      "model_dir=123", "decoding.beam=3", "decoding.beam=4", "training.max_time=15m"});
  CHECK(c.training.learning_rate == 0.0005f);
  CHECK(c.training.batch_tokens == 500);                                // from the file
  CHECK(c.model.arch == heed::Arch::transformer);                       // not JSON: taken as a string
  CHECK(c.data.train_src == std::vector<std::string>{"a.en", "b.en"});  // parsed as JSON
  CHECK(c.model_dir == "123");                                          // a string field takes the text as it is
  CHECK(c.decoding.beam == 4);                                          // the last one wins
  CHECK(c.training.max_time == 900);

  auto set_error = [&](const std::string& kv) { return usage_error([&] { heed::load_config(path, {kv}); }); };
  CHECK(set_error("training.lerning_rate=1") ==
        "--set: unknown key 'training.lerning_rate' (did you mean training.learning_rate?)");
  CHECK(set_error("training.learning_rate=-1") == "--set: training.learning_rate: got -1, expected a number > 0");
  CHECK(set_error("training.batch_tokens=lots") ==
        "--set: training.batch_tokens: got \"lots\", expected an integer >= 1");
  CHECK(set_error("training.learning_rate") ==
        "--set training.learning_rate: expected KEY=VALUE, e.g. --set training.learning_rate=0.0005");
  CHECK(set_error("model.gru=3") ==
        "--set model.gru=3: model.gru is a section; set one field at a time, e.g. model.gru.emb_dim");
  // Cross-field rules see the result of all overrides.
  CHECK(set_error("model.transformer.heads=3") ==
        path + ": model.transformer.d_model (256) must be a multiple of model.transformer.heads (3)");

  auto scalar_section = write_temp("scalar_section.json", R"({"training": 5})");
  CHECK(usage_error([&] { heed::load_config(scalar_section, {"training.beta1=0.5"}); }) ==
        "--set training.beta1: training is not an object in the config file");
  // Overrides without a file start from the defaults.
  CHECK(heed::load_config("", {"seed=42"}).seed == 42);
}

TEST_CASE("apply_override edits the JSON tree") {
  json j = {{"decoding", {{"beam", 2}}}};
  heed::apply_override(j, "decoding.length_penalty=0.6");
  heed::apply_override(j, "tokenizer.joint=false");
  CHECK(j == json::parse(R"({"decoding": {"beam": 2, "length_penalty": 0.6}, "tokenizer": {"joint": false}})"));
}

TEST_CASE("the effective config round-trips through JSON and a model directory") {
  Config c = heed::default_config();
  c.seed = 123456789012345ULL;
  c.model.arch = heed::Arch::transformer;
  c.model.dropout = 0.3f;
  c.model.transformer.activation = heed::FeedForwardActivation::gelu;
  c.data.train_src = {"x.en", "y.en"};
  c.data.train_tgt = {"x.de", "y.de"};
  c.tokenizer.character_coverage = 0.98;
  c.training.learning_rate = 7e-4f;
  c.training.schedule = heed::ScheduleKind::cosine;
  c.training.max_steps = 1000;
  c.training.max_time = 3600;
  c.decoding.length_penalty = 0.6f;

  json j = heed::to_json(c);
  CHECK(heed::config_from_json(j, "roundtrip") == c);
  CHECK(heed::config_from_json(heed::to_json(heed::default_config()), "defaults") == heed::default_config());
  // Floats print as written, not as their binary expansion.
  CHECK(j["training"]["learning_rate"].dump() == "0.0007");
  CHECK(j["model"]["dropout"].dump() == "0.3");
  CHECK(j["data"]["train"]["src"] == json({"x.en", "y.en"}));

  auto model_dir = temp_dir() / "model";
  fs::create_directories(model_dir);
  heed::save_config(c, (model_dir / "config.json").string());
  CHECK(heed::load_model_config(model_dir.string()) == c);
  CHECK(heed::with_overrides(c, {"decoding.beam=9"}, "m").decoding.beam == 9);

  auto not_a_model = temp_dir() / "empty_dir";
  fs::create_directories(not_a_model);
  CHECK(usage_error([&] { heed::load_model_config(not_a_model.string()); }) ==
        not_a_model.string() + " is not a heed model directory (no config.json)");
}
