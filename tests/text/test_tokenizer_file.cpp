// tokenizer.json: save/load round trip (joint and separate) and clear errors for bad files.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>

#include "tokenizer_fixtures.hpp"
#include "util/atomic_file.hpp"

using heed::Tokenizer;
using heed::Tokenizers;

namespace {

struct TempFile {
  std::string path;
  explicit TempFile(std::string name, const std::string& content = "") : path(std::move(name)) {
    if (!content.empty()) heed::write_file_atomic(path, content);
  }
  ~TempFile() { std::remove(path.c_str()); }
};

}  // namespace

TEST_CASE("joint tokenizer.json round trip", "[tokenizer]") {
  const Tokenizer& tok = heed::test::sample_tokenizer();
  TempFile file("tokenizer_joint.json");
  Tokenizers::joint(tok).save(file.path);
  const Tokenizers loaded = Tokenizers::load(file.path);
  CHECK(loaded.is_joint());
  CHECK(loaded.source().to_json() == tok.to_json());
  CHECK(&loaded.source() == &loaded.target());
  const auto j = nlohmann::json::parse(heed::read_file(file.path));
  CHECK(j["format"] == "heed-bpe");
  CHECK(j["version"] == 1);
  CHECK(j["settings"]["normalization"] == "none");
  CHECK(j["vocab"].size() == 1000);
  CHECK(j["merges"].size() == tok.num_merges());
  for (const auto& line : heed::test::sample_lines()) REQUIRE(loaded.source().encode(line) == tok.encode(line));
}

TEST_CASE("separate tokenizer.json round trip", "[tokenizer]") {
  heed::TokenizerOptions opts;
  opts.vocab_size = 400;
  const auto files = heed::test::sample_files();
  const Tokenizer en = Tokenizer::train({files[0]}, opts), de = Tokenizer::train({files[1]}, opts);
  TempFile file("tokenizer_separate.json");
  Tokenizers::separate(en, de).save(file.path);
  const Tokenizers loaded = Tokenizers::load(file.path);
  CHECK_FALSE(loaded.is_joint());
  CHECK(loaded.source().to_json() == en.to_json());
  CHECK(loaded.target().to_json() == de.to_json());
  CHECK(en.to_json() != de.to_json());
}

TEST_CASE("bad tokenizer files give clear errors", "[tokenizer]") {
  auto j = heed::test::sample_tokenizer().to_json();
  SECTION("missing file") {
    CHECK_THROWS_WITH(Tokenizers::load("no_such_tokenizer.json"), Catch::Contains("no_such_tokenizer.json"));
  }
  SECTION("truncated JSON") {
    TempFile f("tokenizer_truncated.json", j.dump().substr(0, 500));
    CHECK_THROWS_WITH(Tokenizers::load(f.path), Catch::Contains(f.path + ": corrupt tokenizer: not valid JSON"));
  }
  SECTION("other version") {
    j["version"] = 2;
    TempFile f("tokenizer_v2.json", j.dump());
    CHECK_THROWS_WITH(Tokenizers::load(f.path),
                      Catch::Contains("format version 2 is not supported (this heed reads version 1)"));
  }
  SECTION("other format") {
    j["format"] = "sentencepiece";
    TempFile f("tokenizer_other.json", j.dump());
    CHECK_THROWS_WITH(Tokenizers::load(f.path), Catch::Contains("not a heed tokenizer"));
  }
  SECTION("merge of unknown piece") {
    j["merges"][3] = {"no", "such"};
    TempFile f("tokenizer_badmerge.json", j.dump());
    CHECK_THROWS_WITH(Tokenizers::load(f.path), Catch::Contains("merge 3 uses a piece missing from the vocabulary"));
  }
  SECTION("duplicate piece") {
    j["vocab"][300] = j["vocab"][301];
    TempFile f("tokenizer_dup.json", j.dump());
    CHECK_THROWS_WITH(Tokenizers::load(f.path), Catch::Contains("appears twice"));
  }
  SECTION("special token moved") {
    j["vocab"][2] = "<bos>";
    TempFile f("tokenizer_special.json", j.dump());
    CHECK_THROWS_WITH(Tokenizers::load(f.path), Catch::Contains("piece 2 is \"<bos>\", expected \"<s>\""));
  }
  SECTION("settings that are no whole numbers (found by fuzz_tokenizer_json: 3e99 cast to int)") {
    for (const nlohmann::json& bad :
         {nlohmann::json(3e99), nlohmann::json(-1), nlohmann::json(12.5), nlohmann::json("8000")}) {
      INFO(bad.dump());
      j["settings"]["vocab_size"] = bad;
      TempFile f("tokenizer_settings.json", j.dump());
      CHECK_THROWS_WITH(Tokenizers::load(f.path),
                        f.path + ": corrupt tokenizer: settings.vocab_size is not a whole number from 0 to 2^30");
    }
  }
  SECTION("no word marker in the vocabulary (found by fuzz_tokenizer_json: spaces did not round-trip)") {
    auto vocab = j["vocab"];
    j["vocab"] = nlohmann::json(std::vector<nlohmann::json>(vocab.begin(), vocab.begin() + 260));
    j["vocab"].push_back("a");
    j["merges"] = nlohmann::json::array();
    TempFile f("tokenizer_no_marker.json", j.dump());
    CHECK_THROWS_WITH(Tokenizers::load(f.path),
                      f.path + ": corrupt tokenizer: the word marker \"\u2581\" is not in the vocabulary");
  }
  SECTION("a merge whose result is a reserved piece: plain \"<s>\" would encode as the special token") {
    auto vocab = j["vocab"];
    j["vocab"] = nlohmann::json(std::vector<nlohmann::json>(vocab.begin(), vocab.begin() + 260));
    for (const char* piece : {"\u2581", "<", "s", ">", "s>"}) j["vocab"].push_back(piece);
    j["merges"] = nlohmann::json::array({nlohmann::json::array({"s", ">"}), nlohmann::json::array({"<", "s>"})});
    TempFile f("tokenizer_reserved_merge.json", j.dump());
    CHECK_THROWS_WITH(Tokenizers::load(f.path), f.path +
                                                    ": corrupt tokenizer: merge 1 (\"<\", \"s>\") makes the "
                                                    "reserved piece \"<s>\"");
  }
  SECTION("a piece holding a literal space (it took the word marker's place)") {
    j["vocab"].push_back(" ");
    TempFile f("tokenizer_space_piece.json", j.dump());
    CHECK_THROWS_WITH(Tokenizers::load(f.path), Catch::Contains(f.path + ": corrupt tokenizer: piece ") &&
                                                    Catch::Contains("(\" \") holds a space"));
  }
  SECTION("wrong types") {
    j["vocab"] = 5;
    TempFile f("tokenizer_types.json", j.dump());
    CHECK_THROWS_WITH(Tokenizers::load(f.path), Catch::Contains(f.path + ": corrupt tokenizer"));
  }
}
