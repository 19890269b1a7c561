#include "serve/response.hpp"

#include <nlohmann/json.hpp>

#include <cmath>

#include "decode/alignment.hpp"

namespace heed::serve {

std::string translate_response(const TranslateRequest& request, const std::vector<TranslationResult>& results,
                               const Tokenizers& tokenizers, const std::string& model, double time_ms) {
  using nlohmann::json;
  const bool plain = request.nbest == 1 && !request.alignment;
  json translations = json::array();
  for (const TranslationResult& r : results) {
    if (plain) {
      translations.push_back(r.nbest.front().text);
      continue;
    }
    json list = json::array();
    for (const Translation& t : r.nbest) {
      json entry = {{"text", t.text}, {"score", t.score}, {"log_prob", t.log_prob}};
      if (request.alignment)
        entry["alignment"] = format_alignment(
            hard_alignment(tokenizers.source(), r.source_tokens, tokenizers.target(), t.tokens, t.attention));
      list.push_back(std::move(entry));
    }
    translations.push_back(std::move(list));
  }
  const json body = {
      {"translations", std::move(translations)}, {"model", model}, {"time_ms", std::round(time_ms * 1000) / 1000}};
  // Translations are valid UTF-8 (the tokenizer's decode replaces stray bytes), but never let a
  // surprise turn into a failed response.
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace heed::serve
