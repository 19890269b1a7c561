#pragma once
// Translations drawn at random from the model instead of searched for: each token is sampled
// from softmax(logits / temperature) over the allowed tokens (as in beam search: never <pad> or
// <s>, <unk> only with allow_unk), restricted by decoding.sampling to the whole vocabulary
// (full), the K most likely tokens (topk:K) or the fewest most likely tokens whose probability
// reaches P (topp:P), renormalised over that set. Prefixes and the length limit work as in beam
// search (forced tokens, then </s> at the limit).
//
// decoding.nbest samples per sentence, best score first (ties: in drawing order). A hypothesis'
// log_prob and score are the model's own (temperature 1, no restriction), so they compare with
// beam search's. The draws of sample i of a sentence come from a counter-based stream keyed by
// (decoding.sampling_seed, the sentence's id, i): the same whatever the batch, its order or the
// thread count.
#include <vector>

#include "decode/beam_search.hpp"

namespace heed {

std::vector<std::vector<Hypothesis>> sample(Seq2Seq& model, const Batch& batch, const DecodingConfig& decoding,
                                            bool keep_attention = true, const SearchConstraints& constraints = {});

// The token drawn from one row of logits for a uniform draw u in [0, 1), with the restriction
// and temperature of `decoding`, among the tokens `allowed`; -1 when no allowed token has a
// finite logit, or a logit is NaN. Public for the distribution tests.
int32_t draw_token(const float* logits, int vocab, const std::vector<char>& allowed, const DecodingConfig& decoding,
                   double u);

// beam_search, or sample when decoding.sampling is set: what translate and the server call.
std::vector<std::vector<Hypothesis>> search(Seq2Seq& model, const Batch& batch, const DecodingConfig& decoding,
                                            bool keep_attention = true, const SearchConstraints& constraints = {});

}  // namespace heed
