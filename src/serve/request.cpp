#include "serve/request.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <limits>

namespace heed::serve {
namespace {

using nlohmann::json;

constexpr std::array<const char*, 4> kFields = {"text", "beam", "nbest", "alignment"};

// A value as the message shows it: JSON, cut short (a client may send anything); an array or
// object by its type only, as dumping one nested a million deep would recurse as deep.
std::string shown(const json& value) {
  if (value.is_structured()) return std::string("an ") + value.type_name();
  std::string s = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

int integer_field(const json& request, const char* name, int fallback, int lo, int hi, const std::string& range) {
  const auto it = request.find(name);
  if (it == request.end()) return fallback;
  const bool integer = it->is_number_integer();
  const int64_t v =
      !integer ? 0
      : it->is_number_unsigned()
          ? static_cast<int64_t>(std::min<uint64_t>(it->get<uint64_t>(), std::numeric_limits<int64_t>::max()))
          : it->get<int64_t>();
  if (!integer || v < lo || v > hi)
    throw RequestError(400, name,
                       std::string(name) + ": must be an integer from 1 to " + range + ", got " + shown(*it));
  return static_cast<int>(v);
}

}  // namespace

TranslateRequest parse_translate_request(const std::string& body, int default_beam, const RequestLimits& limits) {
  json request;
  try {
    request = json::parse(body);
  } catch (const json::exception& e) {  // a syntax error, or a number beyond every type (out_of_range.406)
    std::string what = e.what();  // "[json.exception.parse_error.101] parse error at ..."
    if (const size_t p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
    throw RequestError(400, "", "malformed JSON: " + what);
  }
  if (!request.is_object())
    throw RequestError(400, "", std::string("the request must be a JSON object, got ") + request.type_name());
  for (const auto& [key, value] : request.items()) {
    bool known = false;
    for (const char* f : kFields) known = known || key == f;
    if (!known) throw RequestError(400, key, "unknown field '" + key + "' (fields: text, beam, nbest, alignment)");
  }

  TranslateRequest r;
  const auto text = request.find("text");
  if (text == request.end()) throw RequestError(400, "text", "text: missing (an array of strings to translate)");
  if (!text->is_array())
    throw RequestError(400, "text", std::string("text: must be an array of strings, got ") + text->type_name());
  if (text->size() > limits.max_sentences)
    throw RequestError(413, "text",
                       "text: " + std::to_string(text->size()) + " sentences, over the limit of " +
                           std::to_string(limits.max_sentences) + " per request");
  for (size_t i = 0; i < text->size(); ++i) {
    const json& line = (*text)[i];
    const std::string field = "text[" + std::to_string(i) + "]";
    if (!line.is_string()) throw RequestError(400, field, field + ": must be a string, got " + line.type_name());
    r.text.push_back(line.get<std::string>());
  }

  r.beam = integer_field(request, "beam", default_beam, 1, limits.max_beam, std::to_string(limits.max_beam));
  r.nbest = integer_field(request, "nbest", 1, 1, r.beam, "the beam size " + std::to_string(r.beam));
  if (const auto a = request.find("alignment"); a != request.end()) {
    if (!a->is_boolean()) throw RequestError(400, "alignment", "alignment: must be true or false, got " + shown(*a));
    r.alignment = a->get<bool>();
  }
  return r;
}

std::string error_body(const std::string& message, const std::string& field) {
  json body = {{"error", message}};
  if (!field.empty()) body["field"] = field;
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace heed::serve
