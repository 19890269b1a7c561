#pragma once
// An attention matrix as an SVG heat map, words on both axes: source words (and </s>) across,
// target words (and </s>) down. A cell is the attention a target word pays to a source word: the
// weights of the source word's pieces summed, averaged over the target word's pieces.
#include <cstdint>
#include <string>
#include <vector>

#include "text/tokenizer.hpp"

namespace heed {

struct AttentionMap {
  std::vector<std::string> source_labels, target_labels;  // words, then "</s>"
  std::vector<std::vector<float>> weights;                // [target label][source label]
};

// `attention`: a row per target piece and one for </s>, over the source pieces and </s> (as in
// Hypothesis::attention).
AttentionMap word_attention(const Tokenizer& source, const std::vector<int32_t>& source_ids, const Tokenizer& target,
                            const std::vector<int32_t>& target_ids, const std::vector<std::vector<float>>& attention);

// The same over memory rows (the NTM's read weights, `attention` rows of memory_rows values):
// columns are the rows 0 .. memory_rows − 1.
AttentionMap memory_attention(const Tokenizer& target, const std::vector<int32_t>& target_ids,
                              const std::vector<std::vector<float>>& attention, int memory_rows);

// A standalone SVG document; darker cells are larger weights (0..1), each with a tooltip.
std::string attention_svg(const AttentionMap& map);

}  // namespace heed
