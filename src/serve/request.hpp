#pragma once
// POST /v1/translate bodies: {"text": ["...", ...], "beam": 5, "nbest": 1, "alignment": false}.
// Every field but text is optional. Anything else is refused with the HTTP status and the field
// at fault, so that a client can see what to fix.
#include <stdexcept>
#include <string>
#include <vector>

namespace heed::serve {

struct TranslateRequest {
  std::vector<std::string> text;
  int beam = 1;
  int nbest = 1;
  bool alignment = false;
};

struct RequestLimits {
  size_t max_sentences = 256;  // per request (413 beyond)
  int max_beam = 16;           // beam above it: 400
};

// A request the server refuses: status 400 (malformed) or 413 (too large), the JSON field at
// fault ("text[2]"; empty when the body as a whole is wrong) and a message naming it.
class RequestError : public std::runtime_error {
 public:
  RequestError(int status, std::string field, const std::string& message)
      : std::runtime_error(message), status_(status), field_(std::move(field)) {}
  int status() const { return status_; }
  const std::string& field() const { return field_; }

 private:
  int status_;
  std::string field_;
};

// Parses and checks a body; beam defaults to `default_beam` (the model's decoding.beam).
TranslateRequest parse_translate_request(const std::string& body, int default_beam, const RequestLimits& limits);

// {"error": message, "field": field}; the field is left out when empty.
std::string error_body(const std::string& message, const std::string& field = "");

}  // namespace heed::serve
