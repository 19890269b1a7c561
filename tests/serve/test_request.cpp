// POST /v1/translate bodies: defaults, every field, and each kind of refusal with its status,
// the field at fault and the message.
#include <catch2/catch.hpp>

#include "serve/request.hpp"

using namespace heed::serve;

namespace {

RequestError refusal(const std::string& body, const RequestLimits& limits = {}) {
  try {
    parse_translate_request(body, 5, limits);
  } catch (const RequestError& e) {
    return e;
  }
  FAIL("accepted: " << body);
  return RequestError(0, "", "");
}

}  // namespace

TEST_CASE("a request takes the model's beam, n-best 1 and no alignment unless it says otherwise", "[serve]") {
  const TranslateRequest plain = parse_translate_request(R"({"text": ["Hello", "", "wörld"]})", 5, {});
  CHECK(plain.text == std::vector<std::string>{"Hello", "", "wörld"});
  CHECK(plain.beam == 5);
  CHECK(plain.nbest == 1);
  CHECK_FALSE(plain.alignment);

  const TranslateRequest full =
      parse_translate_request(R"({"text": [], "beam": 3, "nbest": 3, "alignment": true})", 5, {});
  CHECK(full.text.empty());
  CHECK(full.beam == 3);
  CHECK(full.nbest == 3);
  CHECK(full.alignment);
  // The model's own beam is allowed even above the limit for requests.
  CHECK(parse_translate_request(R"({"text": ["a"]})", 20, {}).beam == 20);
}

TEST_CASE("refused requests name the field and say what is allowed", "[serve]") {
  struct Case {
    std::string body;
    int status;
    std::string field, message;
  };
  const std::vector<Case> cases = {
      {"{\"text\": [", 400, "",
       "malformed JSON: parse error at line 1, column 11: syntax error while parsing value - unexpected end of input; "
       "expected '[', '{', or a literal"},
      {"null", 400, "", "the request must be a JSON object, got null"},
      {R"({"beam": 2})", 400, "text", "text: missing (an array of strings to translate)"},
      {R"({"text": {"a": 1}})", 400, "text", "text: must be an array of strings, got object"},
      {R"({"text": ["a", null]})", 400, "text[1]", "text[1]: must be a string, got null"},
      {R"({"text": ["a"], "beam": -1})", 400, "beam", "beam: must be an integer from 1 to 16, got -1"},
      {R"({"text": ["a"], "beam": 18446744073709551615})", 400, "beam",
       "beam: must be an integer from 1 to 16, got 18446744073709551615"},
      {R"({"text": ["a"], "beam": true})", 400, "beam", "beam: must be an integer from 1 to 16, got true"},
      {R"({"text": ["a"], "nbest": 6})", 400, "nbest", "nbest: must be an integer from 1 to the beam size 5, got 6"},
      {R"({"text": ["a"], "nbest": 0, "beam": 1})", 400, "nbest",
       "nbest: must be an integer from 1 to the beam size 1, got 0"},
      {R"({"text": ["a"], "alignment": 1})", 400, "alignment", "alignment: must be true or false, got 1"},
      {R"({"text": ["a"], "beam": [[2]]})", 400, "beam", "beam: must be an integer from 1 to 16, got an array"},
      {R"({"text": ["a"], "alignment": {}})", 400, "alignment", "alignment: must be true or false, got an object"},
      {R"({"text": ["a"], "Text": ["b"]})", 400, "Text", "unknown field 'Text' (fields: text, beam, nbest, alignment)"},
      {R"({"text": ["a"], "beam": ")" + std::string(100, 'x') + R"("})", 400, "beam",
       "beam: must be an integer from 1 to 16, got \"" + std::string(36, 'x') + "..."},
  };
  for (const Case& c : cases) {
    INFO(c.body);
    const RequestError e = refusal(c.body);
    CHECK(e.status() == c.status);
    CHECK(e.field() == c.field);
    CHECK(std::string(e.what()) == c.message);
  }
}

TEST_CASE("too many sentences is 413; the limits are the caller's", "[serve]") {
  RequestLimits limits;
  limits.max_sentences = 2;
  limits.max_beam = 4;
  const RequestError e = refusal(R"({"text": ["a", "b", "c"]})", limits);
  CHECK(e.status() == 413);
  CHECK(e.field() == "text");
  CHECK(std::string(e.what()) == "text: 3 sentences, over the limit of 2 per request");
  CHECK(parse_translate_request(R"({"text": ["a", "b"], "beam": 4})", 1, limits).beam == 4);
  CHECK(refusal(R"({"text": ["a"], "beam": 5})", limits).field() == "beam");
}

TEST_CASE("error bodies are JSON with the message and, when there is one, the field", "[serve]") {
  CHECK(error_body("beam: must be ...", "beam") == R"({"error":"beam: must be ...","field":"beam"})");
  CHECK(error_body("malformed JSON: \"x\"") == R"({"error":"malformed JSON: \"x\""})");
}

TEST_CASE("JSON nested a million deep is refused, not a crash", "[serve]") {
  const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
  CHECK(refusal(R"({"text": ["a"], "beam": )" + deep + "}").field() == "beam");
  CHECK(refusal(R"({"text": )" + deep + "}").field() == "text[0]");
  CHECK(refusal(deep).status() == 400);
}

TEST_CASE("a number beyond every numeric type is malformed JSON, 400 (found by fuzz_serve_request)", "[serve]") {
  // nlohmann reports it as out_of_range, not as a parse error: it escaped as a 500.
  for (const std::string& body : {std::string("3333333e3333"), std::string(R"({"text": ["a"], "beam": 1e999})")}) {
    INFO(body);
    const RequestError e = refusal(body);
    CHECK(e.status() == 400);
    CHECK(e.field().empty());
    CHECK_THAT(std::string(e.what()), Catch::StartsWith("malformed JSON: number overflow parsing"));
  }
}
