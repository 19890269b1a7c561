#include "decode/alignment.hpp"

#include <algorithm>

namespace heed {
namespace {
const std::string kSpacePiece = "\xE2\x96\x81";  // U+2581
}

std::vector<int> piece_words(const Tokenizer& tokenizer, const std::vector<int32_t>& ids) {
  std::vector<int> words;
  int word = -1;
  bool after_space = true;  // the next piece with text starts a word
  for (size_t i = 0; i < ids.size(); ++i) {
    if (tokenizer.piece(ids[i]) == kSpacePiece) {
      // A bare "▁" is the space of the word after it when that word's first piece did not merge
      // with it (e.g. a byte token); before another space or at the end it belongs to no word.
      const bool starts_next =
          i + 1 < ids.size() && tokenizer.piece(ids[i + 1]) != kSpacePiece && !tokenizer.starts_word(ids[i + 1]);
      if (starts_next) {
        words.push_back(++word);
        after_space = false;
      } else {
        words.push_back(-1);
        after_space = true;
      }
      continue;
    }
    if (after_space || tokenizer.starts_word(ids[i])) ++word;
    after_space = false;
    words.push_back(word);
  }
  return words;
}

std::vector<std::string> word_texts(const Tokenizer& tokenizer, const std::vector<int32_t>& ids) {
  const std::vector<int> words = piece_words(tokenizer, ids);
  std::vector<std::vector<int>> pieces;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (words[i] < 0) continue;
    if (words[i] >= static_cast<int>(pieces.size())) pieces.resize(words[i] + 1);
    pieces[words[i]].push_back(ids[i]);
  }
  std::vector<std::string> texts;
  for (const auto& p : pieces) {
    texts.push_back(tokenizer.decode(p));  // decode drops the word's leading space
  }
  return texts;
}

std::vector<std::pair<int, int>> hard_alignment(const Tokenizer& source, const std::vector<int32_t>& source_ids,
                                                const Tokenizer& target, const std::vector<int32_t>& target_ids,
                                                const std::vector<std::vector<float>>& attention) {
  std::vector<std::pair<int, int>> pairs;
  if (source_ids.empty()) return pairs;
  const std::vector<int> source_words = piece_words(source, source_ids);
  const std::vector<int> target_words = piece_words(target, target_ids);
  const size_t rows = std::min(target_ids.size(), attention.size());
  for (size_t t = 0; t < rows; ++t) {
    const auto& row = attention[t];
    const size_t columns = std::min(source_ids.size(), row.size());
    if (columns == 0 || target_words[t] < 0) continue;
    const size_t s = std::max_element(row.begin(), row.begin() + columns) - row.begin();
    if (source_words[s] >= 0) pairs.emplace_back(source_words[s], target_words[t]);
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  return pairs;
}

std::string format_alignment(const std::vector<std::pair<int, int>>& pairs) {
  std::string out;
  for (const auto& [s, t] : pairs) {
    if (!out.empty()) out += ' ';
    out += std::to_string(s) + "-" + std::to_string(t);
  }
  return out;
}

}  // namespace heed
