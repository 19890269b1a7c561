#pragma once
// Word alignments from attention weights. A word is a piece starting with "▁" plus the pieces
// that follow it, which is how the tokenizer splits text at spaces. A piece that is only "▁" starts
// a word when the next piece continues it (a character that did not merge with its space, e.g. a
// byte token); otherwise (a run of spaces, a trailing space) it belongs to no word.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "text/tokenizer.hpp"

namespace heed {

// The 0-based word index of each piece, -1 for a space that belongs to no word.
std::vector<int> piece_words(const Tokenizer& tokenizer, const std::vector<int32_t>& ids);

// The pieces of each word joined into its text (without the leading space).
std::vector<std::string> word_texts(const Tokenizer& tokenizer, const std::vector<int32_t>& ids);

// Hard alignment: each target piece (</s> excluded) is linked to its most attended source piece
// (the source </s> excluded; the first one wins a tie), then pieces are mapped to words.
// `attention` has a row per target piece (a trailing </s> row is ignored) over the source pieces
// (a trailing </s> column is ignored). Returns distinct (source word, target word) pairs, sorted.
std::vector<std::pair<int, int>> hard_alignment(const Tokenizer& source, const std::vector<int32_t>& source_ids,
                                                const Tokenizer& target, const std::vector<int32_t>& target_ids,
                                                const std::vector<std::vector<float>>& attention);

// "0-0 1-2 2-1": Moses/fast_align's source-target pairs.
std::string format_alignment(const std::vector<std::pair<int, int>>& pairs);

}  // namespace heed
