#include "text/tokenizer.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <queue>

#include "text/bpe_trainer.hpp"
#include "text/space_symbol.hpp"
#include "text/tokenizer_model.hpp"
#include "text/word_counter.hpp"
#include "text/words.hpp"
#include "util/error.hpp"
#include "util/text_lines.hpp"
#include "util/utf8.hpp"

namespace heed {

namespace {

uint64_t next_instance() {
  static std::atomic<uint64_t> counter{0};
  return ++counter;
}

[[noreturn]] void corrupt(const std::string& origin, const std::string& what) {
  throw Error(origin + ": corrupt tokenizer: " + what);
}

}  // namespace

void check_format_and_version(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object()) corrupt(origin, "expected a JSON object");
  if (!j.contains("format") || j["format"] != Tokenizer::kFormat)
    throw Error(origin + ": not a heed tokenizer (\"format\" must be \"" + Tokenizer::kFormat + "\")");
  if (!j.contains("version") || !j["version"].is_number_integer())
    corrupt(origin, "\"version\" is missing or not an integer");
  if (j["version"].get<int64_t>() != Tokenizer::kVersion)
    throw Error(origin + ": tokenizer format version " + j["version"].dump() +
                " is not supported (this heed reads version " + std::to_string(Tokenizer::kVersion) + ")");
}

Tokenizer Tokenizer::train(const std::vector<std::string>& files, const TokenizerOptions& opts) {
  if (files.empty()) throw UsageError("tokenizer training needs at least one text file");
  const auto counts = count_words(files);
  if (counts.empty()) {  // a tokenizer of bytes alone, which would claim the vocabulary size asked for
    std::string names;
    for (const std::string& f : files) names += (names.empty() ? "" : ", ") + (f.empty() || f == "-" ? "<stdin>" : f);
    throw Error("no text to learn a tokenizer from in " + names);
  }
  return train_from_word_counts(counts, opts);
}

Tokenizer Tokenizer::train_from_word_counts(const std::unordered_map<std::string, int64_t>& counts,
                                            const TokenizerOptions& opts) {
  BpeModel learned = learn_bpe(counts, opts);
  Tokenizer t;
  t.options_ = opts;
  t.build(std::move(learned.vocab), std::move(learned.merges), "trained tokenizer");
  return t;
}

void Tokenizer::build(std::vector<std::string> vocab, std::vector<std::pair<int, int>> merges,
                      const std::string& origin) {
  auto m = std::make_shared<Model>();
  const auto reserved = reserved_pieces();
  if (vocab.size() <= reserved.size())
    corrupt(origin, "vocabulary has " + std::to_string(vocab.size()) + " pieces, fewer than the " +
                        std::to_string(reserved.size() + 1) + " required");
  for (size_t id = 0; id < reserved.size(); ++id)
    if (vocab[id] != reserved[id])
      corrupt(origin, "piece " + std::to_string(id) + " is \"" + vocab[id] + "\", expected \"" + reserved[id] + "\"");
  m->ascii_char_id.fill(-1);
  m->text.resize(vocab.size());
  m->starts_word.assign(vocab.size(), 0);
  for (size_t id = 0; id < vocab.size(); ++id) {
    const std::string& piece = vocab[id];
    if (piece.empty()) corrupt(origin, "piece " + std::to_string(id) + " is empty");
    if (!m->id_of.emplace(piece, static_cast<int>(id)).second) corrupt(origin, "piece \"" + piece + "\" appears twice");
    if (id < static_cast<size_t>(kFirstByteId)) continue;
    if (id < static_cast<size_t>(kFirstLearnedId)) {
      m->text[id] = std::string(1, static_cast<char>(id - kFirstByteId));
      continue;
    }
    // A literal space would decode like the marker without starting a word, and a " " piece
    // would take the marker's place in the alphabet.
    if (piece.find(' ') != std::string::npos)
      corrupt(origin, "piece " + std::to_string(id) + " (\"" + piece + "\") holds a space; pieces write it as \"" +
                          std::string(kSpaceSymbol) + "\"");
    m->text[id] = symbol_to_spaces(piece);
    m->starts_word[id] = piece.compare(0, kSpaceSymbol.size(), kSpaceSymbol) == 0;
    const std::string& raw = m->text[id];
    if (utf8_char_length(raw, 0) == raw.size()) {  // a single character: part of the alphabet
      if (raw.size() == 1)
        m->ascii_char_id[static_cast<unsigned char>(raw[0]) & 0x7f] = static_cast<int>(id);
      else
        m->char_id.emplace(raw, static_cast<int>(id));
    }
  }
  // Spaces are encoded as the word marker: without it as a piece they would come back as the
  // marker's own bytes, and decode(encode(x)) == x would fail. A learned alphabet always holds it
  // (every word starts with it); a damaged file may not. (Found by fuzz_tokenizer_json.)
  if (m->ascii_char_id[' '] < 0)
    corrupt(origin, "the word marker \"" + std::string(kSpaceSymbol) + "\" is not in the vocabulary");
  const int n = static_cast<int>(vocab.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    auto [a, b] = merges[rank];
    if (a < kFirstLearnedId || b < kFirstLearnedId || a >= n || b >= n)
      corrupt(origin, "merge " + std::to_string(rank) + " refers to a special, byte or unknown piece");
    auto it = m->id_of.find(vocab[a] + vocab[b]);
    if (it == m->id_of.end())
      corrupt(origin, "merge " + std::to_string(rank) + " (\"" + vocab[a] + "\", \"" + vocab[b] +
                          "\") makes a piece missing from the vocabulary");
    if (it->second < kFirstLearnedId)  // encode would emit a special or byte id for plain text
      corrupt(origin, "merge " + std::to_string(rank) + " (\"" + vocab[a] + "\", \"" + vocab[b] +
                          "\") makes the reserved piece \"" + vocab[it->second] + "\"");
    uint64_t key = (static_cast<uint64_t>(a) << 32) | static_cast<uint32_t>(b);
    if (!m->merges.emplace(key, Model::Merge{static_cast<int>(rank), it->second}).second)
      corrupt(origin, "merge " + std::to_string(rank) + " repeats an earlier merge");
  }
  m->vocab = std::move(vocab);
  m->instance = next_instance();
  merges_ = std::move(merges);
  model_ = std::move(m);
}

nlohmann::json Tokenizer::to_json() const {
  nlohmann::json merges = nlohmann::json::array();
  for (auto [a, b] : merges_) merges.push_back({model_->vocab[a], model_->vocab[b]});
  return {{"format", kFormat},
          {"version", kVersion},
          {"vocab", model_->vocab},
          {"merges", std::move(merges)},
          {"settings",
           {{"vocab_size", options_.vocab_size},
            {"character_coverage", options_.character_coverage},
            {"normalization", "none"},
            {"add_dummy_prefix", true},
            {"byte_fallback", true},
            {"split_by_script", options_.split_by_script},
            {"max_piece_length", options_.max_piece_length}}}};
}

Tokenizer Tokenizer::from_json(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object()) corrupt(origin, "expected a JSON object");
  check_format_and_version(j, origin);
  for (const char* key : {"vocab", "merges", "settings"})
    if (!j.contains(key)) corrupt(origin, std::string("\"") + key + "\" is missing");
  try {
    const auto vocab = j.at("vocab").get<std::vector<std::string>>();
    std::unordered_map<std::string, int> id_of;
    for (size_t id = 0; id < vocab.size(); ++id)
      if (!id_of.emplace(vocab[id], static_cast<int>(id)).second)
        corrupt(origin, "piece \"" + vocab[id] + "\" appears twice");
    std::vector<std::pair<int, int>> merges;
    const auto& jm = j.at("merges");
    if (!jm.is_array()) corrupt(origin, "\"merges\" is not an array");
    for (size_t rank = 0; rank < jm.size(); ++rank) {
      const auto pair = jm[rank].get<std::vector<std::string>>();
      if (pair.size() != 2) corrupt(origin, "merge " + std::to_string(rank) + " is not a pair of pieces");
      auto a = id_of.find(pair[0]), b = id_of.find(pair[1]);
      if (a == id_of.end() || b == id_of.end())
        corrupt(origin, "merge " + std::to_string(rank) + " uses a piece missing from the vocabulary");
      merges.emplace_back(a->second, b->second);
    }
    const auto& settings = j.at("settings");
    Tokenizer t;
    // Integers checked before conversion: a float or a huge number cast to int is undefined.
    auto whole_number = [&](const char* key, int fallback) {
      if (!settings.contains(key)) return fallback;
      const auto& v = settings.at(key);
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > (1 << 30))
        corrupt(origin, std::string("settings.") + key + " is not a whole number from 0 to 2^30");
      return static_cast<int>(v.get<int64_t>());
    };
    if (!settings.contains("vocab_size")) corrupt(origin, "settings.vocab_size is missing");
    t.options_.vocab_size = whole_number("vocab_size", 0);
    t.options_.character_coverage = settings.at("character_coverage").get<double>();
    t.options_.split_by_script = settings.value("split_by_script", false);
    t.options_.max_piece_length = whole_number("max_piece_length", 0);
    if (settings.value("normalization", "") != "none")
      corrupt(origin, "unsupported normalization " + settings.value("normalization", "\"\""));
    t.build(vocab, std::move(merges), origin);
    return t;
  } catch (const nlohmann::json::exception& e) {
    corrupt(origin, e.what());
  }
}

int Tokenizer::vocab_size() const { return static_cast<int>(model_->vocab.size()); }

const std::string& Tokenizer::piece(int id) const {
  if (id < 0 || id >= vocab_size())
    throw Error("token id " + std::to_string(id) + " is outside the vocabulary (size " + std::to_string(vocab_size()) +
                ")");
  return model_->vocab[id];
}

int Tokenizer::piece_id(std::string_view piece) const {
  auto it = model_->id_of.find(std::string(piece));
  return it == model_->id_of.end() ? kUnkId : it->second;
}

bool Tokenizer::starts_word(int id) const { return id >= 0 && id < vocab_size() && model_->starts_word[id]; }

std::vector<std::string> Tokenizer::encode_pieces(std::string_view text) const {
  std::vector<std::string> pieces;
  for (int id : encode(text)) pieces.push_back(model_->vocab[id]);
  return pieces;
}

std::string Tokenizer::decode(const std::vector<int>& ids) const {
  const Model& m = *model_;
  std::string out;
  bool first = true, has_bytes = false;
  for (int id : ids) {
    if (id < 0 || id >= vocab_size()) piece(id);  // throws the out-of-range error
    if (id < kFirstByteId) continue;
    has_bytes |= id < kFirstLearnedId;
    const std::string& text = m.text[id];
    // The dummy prefix: the space that encode put before the first word.
    out.append(text, first && m.starts_word[id] ? 1 : 0);
    first = false;
  }
  if (has_bytes) replace_invalid_utf8(out);
  return out;
}

// Tokenizer::encode: cut the line into words, look each word up in a per-thread cache, and
// otherwise apply the merges by rank (lowest first, leftmost first among equal ranks).
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
      if (auto* mg = find_merge(ids[prev[c.pos]], ids[c.pos]))
        queue.push({mg->rank, prev[c.pos], ids[prev[c.pos]], ids[c.pos]});
    if (next[c.pos] >= 0)
      if (auto* mg = find_merge(ids[c.pos], ids[next[c.pos]]))
        queue.push({mg->rank, c.pos, ids[c.pos], ids[next[c.pos]]});
  }
  for (int i = 0; i >= 0 && i < n; i = next[i]) out.push_back(ids[i]);
}

std::vector<int> Tokenizer::encode_uncached(std::string_view text) const {
  std::vector<int> out;
  for_each_word(text, [&](std::string_view word) { encode_word(word, out); });
  return out;
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
