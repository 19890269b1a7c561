#pragma once
// The tokenizers of a model: one joint vocabulary for both languages, or one per side, stored
// together as tokenizer.json.
#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

#include "text/tokenizer.hpp"

namespace heed {

// What a model directory stores as tokenizer.json: one joint model (default) or one per side.
class Tokenizers {
 public:
  static Tokenizers joint(Tokenizer t);
  static Tokenizers separate(Tokenizer source, Tokenizer target);
  static Tokenizers load(const std::string& path);  // clear heed::Error on a corrupt file / wrong version
  static Tokenizers parse(const std::string& text, const std::string& origin);  // the same, from the file's text
  void save(const std::string& path) const;                                     // atomic
  const Tokenizer& source() const;
  const Tokenizer& target() const;
  bool is_joint() const;
  nlohmann::json to_json() const;

 private:
  std::vector<Tokenizer> sides_;  // one (joint) or two (source, target)
};

}  // namespace heed
