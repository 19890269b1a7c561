// tokenizer.json: whatever the bytes, a tokenizer or a heed::Error. A tokenizer that loads must
// encode and decode losslessly and save to JSON that loads back to the same tokenizer.
#include <nlohmann/json.hpp>

#include "fuzz_common.hpp"
#include "text/tokenizers.hpp"
#include "util/utf8.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace heed;
  if (fuzz::expect_errors_only([&] {
        const Tokenizers tokenizers = Tokenizers::parse(fuzz::text(data, size), "fuzz.json");
        for (const Tokenizer* tok : {&tokenizers.source(), &tokenizers.target()}) {
          for (const std::string sample : {"hello world", "  two  spaces ", "ünïcödé ▁ and 数字 123", ""}) {
            if (tok->decode(tok->encode(sample)) != sample) fuzz::broken("decode(encode(x)) != x for '" + sample + "'");
          }
          std::vector<int> every_id(tok->vocab_size());
          for (int id = 0; id < tok->vocab_size(); ++id) every_id[id] = id;
          if (find_invalid_utf8(tok->decode(every_id)) != std::string::npos) fuzz::broken("decode gave invalid UTF-8");
        }
        const Tokenizers again = Tokenizers::parse(tokenizers.to_json().dump(), "round trip");
        if (again.to_json() != tokenizers.to_json()) fuzz::broken("to_json does not load back to the same tokenizer");
      }))
    ++fuzz::accepted_inputs;
  return 0;
}
