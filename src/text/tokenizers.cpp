#include "text/tokenizers.hpp"

#include <nlohmann/json.hpp>
#include <utility>

#include "text/tokenizer_model.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"

namespace heed {

Tokenizers Tokenizers::joint(Tokenizer t) {
  Tokenizers out;
  out.sides_.push_back(std::move(t));
  return out;
}

Tokenizers Tokenizers::separate(Tokenizer source, Tokenizer target) {
  Tokenizers out;
  out.sides_.push_back(std::move(source));
  out.sides_.push_back(std::move(target));
  return out;
}

const Tokenizer& Tokenizers::source() const { return sides_.front(); }
const Tokenizer& Tokenizers::target() const { return sides_.back(); }
bool Tokenizers::is_joint() const { return sides_.size() == 1; }

nlohmann::json Tokenizers::to_json() const {
  if (is_joint()) return source().to_json();
  return {{"format", Tokenizer::kFormat},
          {"version", Tokenizer::kVersion},
          {"source", source().to_json()},
          {"target", target().to_json()}};
}

Tokenizers Tokenizers::load(const std::string& path) { return parse(read_file(path), path); }

Tokenizers Tokenizers::parse(const std::string& text, const std::string& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": corrupt tokenizer: not valid JSON (" + e.what() + ")");
  }
  if (j.is_object() && j.contains("source")) {
    if (!j.contains("target")) throw Error(path + ": corrupt tokenizer: \"source\" without \"target\"");
    check_format_and_version(j, path);
    return separate(Tokenizer::from_json(j["source"], path + " (source)"),
                    Tokenizer::from_json(j["target"], path + " (target)"));
  }
  return joint(Tokenizer::from_json(j, path));
}

void Tokenizers::save(const std::string& path) const { write_file_atomic(path, to_json().dump() + "\n"); }

}  // namespace heed
