#pragma once
// Subword tokenizer: byte-pair encoding learned from raw text, in the style of SentencePiece.
//
// Normalisation: NONE. The text is used exactly as given (no NFKC, no whitespace folding), so
// decode(encode(x)) == x for every valid UTF-8 string x.
//
// Whitespace scheme (lossless): every ASCII space U+0020 becomes the visible symbol U+2581 "▁",
// and one extra "▁" is prepended to a non-empty line (the dummy prefix, so that a word is the
// same piece at the start of a line as in the middle). decode turns "▁" back into spaces and
// removes that one leading space. Tabs and all other characters are ordinary characters.
// A literal U+2581 in the input is never part of the alphabet: it is always written as its
// three byte tokens, which decode copies verbatim, so it cannot be confused with a space.
// Pieces never cross a "▁": a word is a "▁" followed by the characters up to the next "▁".
//
// Vocabulary layout (ids): 0 <pad>, 1 <unk>, 2 <s>, 3 </s>; 4..259 the byte tokens <0x00>..<0xFF>
// (byte fallback: a character outside the learned alphabet becomes the tokens of its UTF-8
// bytes, so nothing ever maps to <unk>); then the alphabet characters, most frequent first;
// then the pieces created by merges, in merge order. Byte tokens never merge.
//
// tokenizer.json, format "heed-bpe", version 1:
//   joint:    {"format":"heed-bpe","version":1,"vocab":[pieces by id],"merges":[["a","b"],...],
//              "settings":{"vocab_size":N,"character_coverage":c,"normalization":"none",
//                          "add_dummy_prefix":true,"byte_fallback":true,"split_by_script":b,
//                          "max_piece_length":n}}
//   (the last two describe how the merges were learned; files written before they existed
//   load with false and 0, meaning "not applied")
//   separate: {"format":"heed-bpe","version":1,"source":{<joint object>},"target":{<joint object>}}
// A merge's rank is its index in "merges" (lower merges first). Two merges may produce the same
// piece (e.g. "ab"+"c" and "a"+"bc"); the vocabulary holds each piece once.
#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokens/special_tokens.hpp"

namespace heed {

struct TokenizerOptions {
  int vocab_size = 8000;               // includes the 4 specials and the 256 byte tokens
  double character_coverage = 0.9995;  // share of character occurrences kept in the alphabet
  bool split_by_script = true;         // pieces never mix scripts, or letters with digits/punctuation
  int max_piece_length = 16;           // characters, the leading U+2581 included
};

class Tokenizer {
 public:
  // Ids: the specials and byte tokens of tokens/special_tokens.hpp, then the learned pieces.
  static constexpr const char* kFormat = "heed-bpe";
  static constexpr int kVersion = 1;

  // Learn BPE from text lines (each line a sentence) of UTF-8 files; invalid UTF-8 or a NUL byte
  // is an error naming file and line. Deterministic: the same input gives the same model for any
  // thread count.
  static Tokenizer train(const std::vector<std::string>& files, const TokenizerOptions& opts);
  // Learn from word counts directly (what train() does after counting): words are chunks of a
  // line as described above, each starting with a space, e.g. " the".
  static Tokenizer train_from_word_counts(const std::unordered_map<std::string, int64_t>& counts,
                                          const TokenizerOptions& opts);
  // origin names the file (and part) in error messages.
  static Tokenizer from_json(const nlohmann::json& j, const std::string& origin);
  nlohmann::json to_json() const;

  std::vector<int> encode(std::string_view text) const;  // no <s>/</s> added
  // The same ids without the calling thread's word cache: for threads that are many or short-lived
  // (a server's connection threads), where a cache each would multiply memory by the threads.
  std::vector<int> encode_uncached(std::string_view text) const;
  std::vector<std::string> encode_pieces(std::string_view text) const;
  // Specials are skipped; invalid UTF-8 produced by stray byte tokens becomes U+FFFD.
  // Throws heed::Error for an id outside the vocabulary.
  std::string decode(const std::vector<int>& ids) const;
  int vocab_size() const;
  const std::string& piece(int id) const;
  int piece_id(std::string_view piece) const;  // kUnkId when unknown
  bool starts_word(int id) const;              // piece begins with U+2581 (not a byte token)

  const TokenizerOptions& options() const { return options_; }
  size_t num_merges() const { return merges_.size(); }
  const std::pair<int, int>& merge(size_t rank) const { return merges_[rank]; }

 private:
  struct Model;  // lookup tables built from vocab + merges (immutable, shared between copies)
  void build(std::vector<std::string> vocab, std::vector<std::pair<int, int>> merges, const std::string& origin);
  void encode_word(std::string_view word, std::vector<int>& out) const;

  TokenizerOptions options_;
  std::vector<std::pair<int, int>> merges_;  // by rank: (left id, right id)
  std::shared_ptr<const Model> model_;
};

}  // namespace heed
