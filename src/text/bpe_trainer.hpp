#pragma once
// BPE learning from word counts: choose the alphabet (character_coverage), then merge the most
// frequent adjacent pair again and again. Pair counts are kept up to date incrementally: a
// priority queue of (count, pair) with lazy invalidation, the words' symbols as linked lists and
// a pair -> places index, so a merge only visits the places where its pair occurs: it never
// recounts the corpus, nor rescans a long word (a text without spaces is one word).
#include <string>
#include <utility>
#include <vector>

#include "text/tokenizer.hpp"
#include "text/word_counter.hpp"

namespace heed {

struct BpeModel {
  std::vector<std::string> vocab;           // pieces by id, spaces shown as U+2581
  std::vector<std::pair<int, int>> merges;  // by rank: (left id, right id)
};

// Ties between equally frequent pairs go to the smaller (left piece, right piece) in byte order,
// so the result depends only on the counts.
BpeModel learn_bpe(const WordCounts& counts, const TokenizerOptions& opts);

// The fixed start of every vocabulary: <pad> <unk> <s> </s> <0x00> ... <0xFF>.
std::vector<std::string> reserved_pieces();

}  // namespace heed
