#include "text/bpe_trainer.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "text/script.hpp"
#include "text/space_symbol.hpp"
#include "util/error.hpp"
#include "util/interrupt.hpp"
#include "util/utf8.hpp"

namespace heed {

std::vector<std::string> reserved_pieces() {
  static constexpr const char* kSpecials[] = {"<pad>", "<unk>", "<s>", "</s>"};  // ids kPadId..kEosId
  static_assert(std::size(kSpecials) == kFirstByteId && kPadId == 0 && kUnkId == 1 && kBosId == 2 && kEosId == 3,
                "the tokenizer's special pieces must sit at the ids of tokens/special_tokens.hpp");
  std::vector<std::string> pieces(std::begin(kSpecials), std::end(kSpecials));
  char name[8];
  for (int b = 0; b < kByteTokens; ++b) {
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    pieces.emplace_back(name);
  }
  return pieces;
}

namespace {

using Pair = uint64_t;
using Node = uint32_t;  // a symbol's place in BpeLearner's lists
constexpr Node kNoNode = UINT32_MAX;
constexpr int kMergedAway = -1;
Pair make_pair_key(int a, int b) { return (static_cast<uint64_t>(a) << 32) | static_cast<uint32_t>(b); }
int left_of(Pair p) { return static_cast<int>(p >> 32); }
int right_of(Pair p) { return static_cast<int>(p & 0xffffffffu); }

// Characters kept in the alphabet: most frequent first until character_coverage of all
// character occurrences is reached (the space always, a literal U+2581 never: see tokenizer.hpp).
std::vector<std::string> choose_alphabet(const WordCounts& counts, const TokenizerOptions& opts) {
  std::unordered_map<std::string, int64_t> chars;
  for (const auto& [word, n] : counts) {
    for (size_t i = 0; i < word.size();) {
      size_t len = utf8_char_length(word, i);
      bool is_char = len > 1 || static_cast<unsigned char>(word[i]) < 0x80;
      if (is_char && word.compare(i, len, kSpaceSymbol) != 0) chars[word.substr(i, len)] += n;
      i += len;
    }
  }
  std::vector<std::pair<std::string, int64_t>> sorted(chars.begin(), chars.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& x, const auto& y) {
    return x.second != y.second ? x.second > y.second : x.first < y.first;
  });
  int64_t total = 0;
  for (const auto& c : sorted) total += c.second;
  const size_t max_chars = static_cast<size_t>(opts.vocab_size - kFirstLearnedId);
  std::vector<std::string> alphabet = {" "};
  int64_t covered = chars.count(" ") ? chars[" "] : 0;
  for (const auto& [ch, n] : sorted) {
    if (ch == " ") continue;
    if (alphabet.size() >= max_chars || static_cast<double>(covered) >= opts.character_coverage * total) break;
    alphabet.push_back(ch);
    covered += n;
  }
  spdlog::info("tokenizer: alphabet of {} characters ({} seen), covering {:.4f}%", alphabet.size(), sorted.size(),
               total ? 100.0 * covered / total : 100.0);
  return alphabet;
}

class BpeLearner {
 public:
  BpeLearner(const WordCounts& counts, const TokenizerOptions& opts) : opts_(opts) {
    raw_ = reserved_pieces();  // placeholders: reserved ids never take part in merges
    script_.assign(raw_.size(), kAnyScript);
    length_.assign(raw_.size(), 0);
    for (const auto& ch : choose_alphabet(counts, opts)) add_piece(ch);
    words_.reserve(counts.size());
    for (const auto& [word, n] : counts) words_.push_back({word, n});
    // Sorted words number the nodes, hence every list, independently of hash order.
    std::sort(words_.begin(), words_.end());
    word_start_.reserve(words_.size() + 1);
    for (const auto& [word, n] : words_) {
      word_start_.push_back(static_cast<Node>(symbol_.size()));
      for (int id : to_symbols(word)) {
        if (symbol_.size() >= kNoNode)
          throw Error("tokenizer: the distinct words of the training text hold over 4 billion characters");
        const auto node = static_cast<Node>(symbol_.size());
        const bool first = node == word_start_.back();
        symbol_.push_back(id);
        prev_.push_back(first ? kNoNode : node - 1);
        next_.push_back(kNoNode);
        if (first) continue;
        next_[node - 1] = node;
        if (!can_merge(symbol_[node - 1], id)) continue;
        const Pair p = make_pair_key(symbol_[node - 1], id);
        pair_counts_[p] += n;
        where_[p].push_back(node - 1);
      }
    }
    word_start_.push_back(static_cast<Node>(symbol_.size()));
    for (const auto& [p, n] : pair_counts_) queue_.push({n, p});
  }

  BpeModel run() {
    BpeModel model;
    while (static_cast<int>(raw_.size()) < opts_.vocab_size && !queue_.empty()) {
      throw_if_interrupted();
      Entry top = queue_.top();
      queue_.pop();
      auto it = pair_counts_.find(top.pair);
      int64_t current = it == pair_counts_.end() ? 0 : it->second;
      if (current != top.count) {  // stale entry: counts only fall unless re-pushed
        if (current > 0) queue_.push({current, top.pair});
        continue;
      }
      if (forbidden_.count(top.pair)) continue;
      const int a = left_of(top.pair), b = right_of(top.pair);
      std::string joined = raw_[a] + raw_[b];
      if (is_reserved_name(spaces_to_symbol(joined))) {  // never shadow <s>, <0x41>, ...
        forbidden_.insert(top.pair);
        continue;
      }
      auto found = id_of_.find(joined);
      const int c = found != id_of_.end() ? found->second : add_piece(joined);
      model.merges.emplace_back(a, b);
      apply_merge(top.pair, a, b, c);
    }
    model.vocab.reserve(raw_.size());
    for (size_t id = 0; id < raw_.size(); ++id)
      model.vocab.push_back(static_cast<int>(id) < kFirstLearnedId ? raw_[id] : spaces_to_symbol(raw_[id]));
    spdlog::info("tokenizer: {} merges, vocabulary {}", model.merges.size(), model.vocab.size());
    return model;
  }

 private:
  struct Entry {
    int64_t count;
    Pair pair;
  };
  struct EntryOrder {  // "less" for a max-heap: higher count first, then smaller pieces
    const std::vector<std::string>* raw;
    bool operator()(const Entry& x, const Entry& y) const {
      if (x.count != y.count) return x.count < y.count;
      const auto& xl = (*raw)[left_of(x.pair)];
      const auto& yl = (*raw)[left_of(y.pair)];
      if (xl != yl) return xl > yl;
      return (*raw)[right_of(x.pair)] > (*raw)[right_of(y.pair)];
    }
  };

  // Pairs that may never merge are not even counted: byte tokens, pieces of different scripts
  // (split_by_script), and pieces that would together exceed max_piece_length.
  bool can_merge(int a, int b) const {
    if (a < kFirstLearnedId || b < kFirstLearnedId) return false;
    if (opts_.max_piece_length > 0 && length_[a] + length_[b] > opts_.max_piece_length) return false;
    return !opts_.split_by_script || scripts_compatible(script_[a], script_[b]);
  }

  bool is_reserved_name(const std::string& piece) const {
    for (int id = 0; id < kFirstLearnedId; ++id)
      if (raw_[id] == piece) return true;
    return false;
  }

  int add_piece(const std::string& raw) {
    int id = static_cast<int>(raw_.size());
    raw_.push_back(raw);
    id_of_.emplace(raw, id);
    script_.push_back(script_of_piece(raw));
    length_.push_back(static_cast<int>(utf8_length(raw)));
    return id;
  }

  std::vector<int> to_symbols(const std::string& word) const {
    std::vector<int> out;
    for (size_t i = 0; i < word.size();) {
      size_t len = utf8_char_length(word, i);
      auto it = id_of_.find(word.substr(i, len));
      if (it != id_of_.end() && it->second >= kFirstLearnedId) {
        out.push_back(it->second);
      } else {
        for (size_t k = 0; k < len; ++k) out.push_back(kFirstByteId + static_cast<unsigned char>(word[i + k]));
      }
      i += len;
    }
    return out;
  }

  // Replace (a, b) by c wherever it occurs, left to right within a word (in "a a a", (a, a)
  // merges once, at the start), and move the counts of the pairs around each place: (x, a) and
  // (b, y) become (x, c) and (c, y). A merge costs the number of its places, however long the
  // words (a text without spaces is one long word: rescanning it for every merge was quadratic).
  void apply_merge(Pair merged, int a, int b, int c) {
    std::vector<Node> where = std::move(where_[merged]);
    where_.erase(merged);
    std::sort(where.begin(), where.end());  // nodes in text order, as a scan of each word meets them
    where.erase(std::unique(where.begin(), where.end()), where.end());
    std::unordered_set<Pair> grown;
    for (Node i : where) {
      const Node j = next_[i];
      if (symbol_[i] != a || j == kNoNode || symbol_[j] != b) continue;  // gone, or merged already
      const int64_t n = count_at(i);
      const Node before = prev_[i], after = next_[j];
      if (before != kNoNode) add_count(symbol_[before], a, -n);
      add_count(a, b, -n);
      if (after != kNoNode) add_count(b, symbol_[after], -n);
      symbol_[i] = c;
      symbol_[j] = kMergedAway;
      next_[i] = after;
      if (after != kNoNode) prev_[after] = i;
      auto gain = [&](Node left, int x, int y) {
        if (!add_count(x, y, n)) return;
        grown.insert(make_pair_key(x, y));
        where_[make_pair_key(x, y)].push_back(left);
      };
      if (before != kNoNode) gain(before, symbol_[before], c);
      if (after != kNoNode) gain(i, c, symbol_[after]);
    }
    for (Pair p : grown) {
      auto it = pair_counts_.find(p);
      if (it != pair_counts_.end()) queue_.push({it->second, p});
    }
  }

  // Adds n to the count of (x, y) if that pair may merge (a count reaching 0 is removed); false
  // for a pair that is never counted.
  bool add_count(int x, int y, int64_t n) {
    if (!can_merge(x, y)) return false;
    const Pair p = make_pair_key(x, y);
    if ((pair_counts_[p] += n) == 0) pair_counts_.erase(p);
    return true;
  }

  // How often the word holding `node` occurs.
  int64_t count_at(Node node) const {
    const auto w = std::upper_bound(word_start_.begin(), word_start_.end(), node) - word_start_.begin() - 1;
    return words_[w].second;
  }

  const TokenizerOptions& opts_;
  std::vector<std::string> raw_;     // pieces by id with plain spaces (byte ids: their names)
  std::vector<ScriptClass> script_;  // by id: script_of_piece
  std::vector<int> length_;          // by id: characters
  std::unordered_map<std::string, int> id_of_;
  std::vector<std::pair<std::string, int64_t>> words_;
  // The symbols of all words, word after word: a linked list per word, so that a merge changes
  // two nodes and leaves every other in place (node numbers stay in text order).
  std::vector<int> symbol_;        // by node: piece id, kMergedAway once merged into its left node
  std::vector<Node> prev_, next_;  // by node: the neighbours in its word, kNoNode at the ends
  std::vector<Node> word_start_;   // by word: its first node; then the number of nodes
  std::unordered_map<Pair, int64_t> pair_counts_;
  std::unordered_map<Pair, std::vector<Node>> where_;  // pair -> the nodes it starts at (some stale)
  std::unordered_set<Pair> forbidden_;  // pairs whose piece would read like a reserved one
  std::priority_queue<Entry, std::vector<Entry>, EntryOrder> queue_{EntryOrder{&raw_}};
};

}  // namespace

BpeModel learn_bpe(const WordCounts& counts, const TokenizerOptions& opts) {
  if (opts.vocab_size <= kFirstLearnedId)
    throw UsageError("vocabulary size " + std::to_string(opts.vocab_size) + " is too small: it must exceed " +
                     std::to_string(kFirstLearnedId) + " (4 special and 256 byte tokens)");
  if (!(opts.character_coverage > 0.0 && opts.character_coverage <= 1.0))
    throw UsageError("character coverage must be in (0, 1], got " + std::to_string(opts.character_coverage));
  if (opts.max_piece_length == 1 || opts.max_piece_length < 0)
    throw UsageError("max piece length must be at least 2 (0: no limit), got " + std::to_string(opts.max_piece_length));
  return BpeLearner(counts, opts).run();
}

}  // namespace heed
