#include "serve/decode_batch.hpp"

#include "decode/sampling.hpp"
#include "tokens/batch.hpp"

namespace heed::serve {

DecodingConfig request_search(const DecodingConfig& defaults, int beam, int nbest) {
  DecodingConfig search = defaults;
  search.beam = beam;
  search.nbest = nbest;
  return search;
}

std::vector<std::vector<Translation>> decode_batch(Seq2Seq& model, const Tokenizer& target,
                                                   const std::vector<std::vector<int32_t>>& sources,
                                                   const DecodingConfig& search, bool keep_attention) {
  const auto hypotheses = heed::search(model, make_batch(sources, {}), search, keep_attention);
  std::vector<std::vector<Translation>> out(hypotheses.size());
  for (size_t i = 0; i < hypotheses.size(); ++i) {
    for (const Hypothesis& h : hypotheses[i]) {
      out[i].push_back(to_translation(target, h));
    }
  }
  return out;
}

}  // namespace heed::serve
