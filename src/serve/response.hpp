#pragma once
// The body of a successful POST /v1/translate:
//   {"translations": [...], "model": NAME, "time_ms": T}
// with one entry per input sentence, in order: the best translation as a string, or, when the
// request asks for nbest > 1 or alignment, a list of the n best as objects
// {"text": ..., "score": ..., "alignment": "0-0 1-2"} (alignment only when asked for).
#include <string>
#include <vector>

#include "decode/translator.hpp"
#include "serve/request.hpp"
#include "text/tokenizers.hpp"

namespace heed::serve {

std::string translate_response(const TranslateRequest& request, const std::vector<TranslationResult>& results,
                               const Tokenizers& tokenizers, const std::string& model, double time_ms);

}  // namespace heed::serve
