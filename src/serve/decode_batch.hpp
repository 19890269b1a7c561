#pragma once
// The server's one call into the decoder: a batch of tokenized sentences through the search
// (beam search, or sampling when the model's decoding settings ask for it; a sample is then
// seeded by the sentence's place in its batch), detokenized. The server calls the search
// directly rather than translate_lines, because translate_lines (a) stops at Ctrl-C, and the
// server must finish its in-flight requests then, (b) opens a StepWeightsHold, whose count is not
// meant for several threads at once (the server holds the step weights once for its lifetime
// instead), and (c) tokenizes again, while the server has already tokenized each sentence to
// check its length and batch it.
#include <cstdint>
#include <vector>

#include "decode/beam_search.hpp"
#include "decode/translator.hpp"
#include "models/seq2seq.hpp"
#include "text/tokenizers.hpp"

namespace heed::serve {

// `defaults` (the model's decoding settings) with a request's beam and n-best size.
DecodingConfig request_search(const DecodingConfig& defaults, int beam, int nbest);

// The n-best translations of each source (non-empty, without </s>), best first, in order, with
// their attention rows when keep_attention (only alignments need them; keeping them copies S
// floats per live hypothesis and step). Safe to call from several threads at once on one model
// while the model is in evaluation mode (EvalMode held by the caller); each thread then runs its
// own primitives.
std::vector<std::vector<Translation>> decode_batch(Seq2Seq& model, const Tokenizer& target,
                                                   const std::vector<std::vector<int32_t>>& sources,
                                                   const DecodingConfig& search, bool keep_attention);

}  // namespace heed::serve
