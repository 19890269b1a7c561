// The server's reader of POST /v1/translate bodies, the one reader that takes input from the
// network. A body is accepted within the limits or refused with 400 or 413 and an error body that
// is JSON naming the field; an accepted request written back as JSON reads back the same.
#include <nlohmann/json.hpp>

#include "fuzz_common.hpp"
#include "serve/request.hpp"

namespace {

using nlohmann::json;

// Small limits, so that the fuzzer reaches the refusals for size as well as for form.
constexpr int kDefaultBeam = 5;
const heed::serve::RequestLimits kLimits{8, 6};

void check_accepted(const heed::serve::TranslateRequest& r) {
  using heed::fuzz::broken;
  if (r.text.size() > kLimits.max_sentences) broken("more sentences than the limit accepted");
  if (r.beam < 1 || r.beam > kLimits.max_beam) broken("beam out of range accepted");
  if (r.nbest < 1 || r.nbest > r.beam) broken("nbest out of range accepted");
  // Accepted sentences must be writable as JSON (a response may echo them) and read back equal.
  const json written = {{"text", r.text}, {"beam", r.beam}, {"nbest", r.nbest}, {"alignment", r.alignment}};
  const heed::serve::TranslateRequest again =
      heed::serve::parse_translate_request(written.dump(), kDefaultBeam, kLimits);
  if (again.text != r.text || again.beam != r.beam || again.nbest != r.nbest || again.alignment != r.alignment)
    broken("an accepted request written back as JSON reads back different");
}

void check_refused(const heed::serve::RequestError& e) {
  using heed::fuzz::broken;
  if (e.status() != 400 && e.status() != 413) broken("refusal with status " + std::to_string(e.status()));
  if (std::string(e.what()).empty()) broken("refusal without a message");
  const json body = json::parse(heed::serve::error_body(e.what(), e.field()), nullptr, false);
  if (!body.is_object() || !body.contains("error") || !body["error"].is_string()) broken("error body is not JSON");
  if (body.contains("field") != !e.field().empty()) broken("error body's field does not match the refusal's");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    check_accepted(heed::serve::parse_translate_request(heed::fuzz::text(data, size), kDefaultBeam, kLimits));
    ++heed::fuzz::accepted_inputs;
  } catch (const heed::serve::RequestError& e) {
    check_refused(e);
  }
  return 0;
}
