// The body of a successful POST /v1/translate: strings for plain requests, n-best lists of
// objects (text, score, alignment) otherwise, with the model name and time.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "decode/alignment.hpp"
#include "serve/response.hpp"
#include "tiny_model.hpp"

using namespace heed;
using namespace heed::serve;
using nlohmann::json;

namespace {

// Two sentences: "Hello world" with two hypotheses whose attention is given, and an empty one.
std::vector<TranslationResult> results() {
  const Tokenizers& tok = test::sample_tokenizers();
  std::vector<TranslationResult> r(2);
  const std::vector<int> source = tok.source().encode("Hello world");
  r[0].source_tokens.assign(source.begin(), source.end());
  for (const char* text : {"Hallo Welt", "Hallo"}) {
    Translation t;
    t.text = text;
    const std::vector<int> ids = tok.target().encode(text);
    t.tokens.assign(ids.begin(), ids.end());
    t.score = r[0].nbest.empty() ? -0.5f : -2.5f;
    // each target piece attends most to the source piece of the same position (mod length)
    for (size_t i = 0; i <= t.tokens.size(); ++i) {
      std::vector<float> row(source.size() + 1, 0.01f);
      row[i % source.size()] = 0.9f;
      t.attention.push_back(row);
    }
    r[0].nbest.push_back(t);
  }
  r[1].nbest.emplace_back();
  return r;
}

}  // namespace

TEST_CASE("a plain request gets the best translation of each sentence as a string", "[serve]") {
  TranslateRequest request;
  request.text = {"Hello world", ""};
  request.nbest = 1;
  const json body = json::parse(translate_response(request, results(), test::sample_tokenizers(), "m", 12.34567));
  CHECK(body == json{{"translations", {"Hallo Welt", ""}}, {"model", "m"}, {"time_ms", 12.346}});
}

TEST_CASE("n-best or alignment requests get lists of objects", "[serve]") {
  const Tokenizers& tok = test::sample_tokenizers();
  const auto r = results();
  TranslateRequest request;
  request.text = {"Hello world", ""};
  request.beam = 2;
  request.nbest = 2;
  request.alignment = true;
  const json body = json::parse(translate_response(request, r, tok, "m", 1));
  const json& first = body["translations"][0];
  REQUIRE(first.size() == 2);
  CHECK(first[0]["text"] == "Hallo Welt");
  CHECK(first[0]["score"] == -0.5);
  CHECK(first[1]["score"] == -2.5);
  const std::string alignment = format_alignment(
      hard_alignment(tok.source(), r[0].source_tokens, tok.target(), r[0].nbest[0].tokens, r[0].nbest[0].attention));
  CHECK_FALSE(alignment.empty());
  CHECK(first[0]["alignment"] == alignment);
  CHECK(body["translations"][1] == json::array({{{"text", ""}, {"score", 0.0}, {"log_prob", 0.0}, {"alignment", ""}}}));

  request.alignment = false;  // n-best alone: no alignment field
  const json plain = json::parse(translate_response(request, r, tok, "m", 1));
  CHECK_FALSE(plain["translations"][0][0].contains("alignment"));
}
