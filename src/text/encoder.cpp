// Tokenizer::encode: cut the line into words, look each word up in a per-thread cache, and
// otherwise apply the merges by rank (lowest first, leftmost first among equal ranks).
#include <algorithm>
#include <queue>

#include "text/tokenizer.hpp"
#include "text/tokenizer_model.hpp"
#include "text/space_symbol.hpp"
#include "util/utf8.hpp"
#include "text/words.hpp"

namespace heed {

namespace {

// Frequent words repeat constantly in real text; caching their ids skips the merge loop. One
// cache per thread (no locking), per tokenizer table, emptied when it grows too large.
struct WordCache {
  static constexpr size_t kMaxWords = 1 << 17;
  static constexpr size_t kMaxWordBytes = 48;
  static constexpr size_t kMaxTables = 4;
  struct Table {
    uint64_t instance;
    std::unordered_map<std::string, std::vector<int>> ids;
  };
  std::vector<Table> tables;

  std::unordered_map<std::string, std::vector<int>>& for_instance(uint64_t instance) {
    for (auto& t : tables)
      if (t.instance == instance) return t.ids;
    if (tables.size() >= kMaxTables) tables.erase(tables.begin());
    tables.push_back({instance, {}});
    return tables.back().ids;
  }
};

WordCache& thread_cache() {
  thread_local WordCache cache;
  return cache;
}

struct Candidate {  // a mergeable adjacent pair; smallest (rank, position) merges first
  int rank;
  int pos;
  int left_id;
  int right_id;
  bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
};

}  // namespace

void Tokenizer::encode_word(std::string_view word, std::vector<int>& out) const {
  const Model& m = *model_;
  thread_local std::vector<int> ids, prev, next;
  ids.clear();
  for (size_t i = 0; i < word.size();) {
    const size_t len = utf8_char_length(word, i);
    int id = -1;
    if (len == 1 && static_cast<unsigned char>(word[i]) < 0x80) {
      id = m.ascii_char_id[static_cast<unsigned char>(word[i])];
    } else if (len > 1) {
      auto it = m.char_id.find(std::string(word.substr(i, len)));
      if (it != m.char_id.end()) id = it->second;
    }
    if (id >= 0) {
      ids.push_back(id);
    } else {  // byte fallback
      for (size_t k = 0; k < len; ++k) ids.push_back(kFirstByteId + static_cast<unsigned char>(word[i + k]));
    }
    i += len;
  }
  const int n = static_cast<int>(ids.size());
  auto find_merge = [&](int a, int b) -> const Model::Merge* {
    auto it = m.merges.find((static_cast<uint64_t>(a) << 32) | static_cast<uint32_t>(b));
    return it == m.merges.end() ? nullptr : &it->second;
  };
  // Symbols form a linked list over positions; a merged-away position has ids[pos] == -1.
  prev.resize(n);
  next.resize(n);
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  for (int i = 0; i < n; ++i) {
    prev[i] = i - 1;
    next[i] = i + 1 < n ? i + 1 : -1;
    if (i + 1 < n)
      if (auto* mg = find_merge(ids[i], ids[i + 1])) queue.push({mg->rank, i, ids[i], ids[i + 1]});
  }
  while (!queue.empty()) {
    Candidate c = queue.top();
    queue.pop();
    const int right = next[c.pos];
    if (ids[c.pos] != c.left_id || right < 0 || ids[right] != c.right_id) continue;  // stale
    ids[c.pos] = find_merge(c.left_id, c.right_id)->result;
    ids[right] = -1;
    next[c.pos] = next[right];
    if (next[right] >= 0) prev[next[right]] = c.pos;
    if (prev[c.pos] >= 0)
      if (auto* mg = find_merge(ids[prev[c.pos]], ids[c.pos])) queue.push({mg->rank, prev[c.pos], ids[prev[c.pos]], ids[c.pos]});
    if (next[c.pos] >= 0)
      if (auto* mg = find_merge(ids[c.pos], ids[next[c.pos]])) queue.push({mg->rank, c.pos, ids[c.pos], ids[next[c.pos]]});
  }
  for (int i = 0; i >= 0 && i < n; i = next[i]) out.push_back(ids[i]);
}

std::vector<int> Tokenizer::encode(std::string_view text) const {
  std::vector<int> out;
  auto& cache = thread_cache().for_instance(model_->instance);
  std::string key;
  for_each_word(text, [&](std::string_view word) {
    if (word.size() > WordCache::kMaxWordBytes) {
      encode_word(word, out);
      return;
    }
    key.assign(word);
    auto it = cache.find(key);
    if (it == cache.end()) {
      if (cache.size() >= WordCache::kMaxWords) cache.clear();
      std::vector<int> ids;
      encode_word(word, ids);
      it = cache.emplace(key, std::move(ids)).first;
    }
    out.insert(out.end(), it->second.begin(), it->second.end());
  });
  return out;
}

}  // namespace heed
