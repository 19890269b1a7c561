#pragma once
// "Did you mean" for unknown config keys: the known key (field or section) closest to a
// misspelt or misplaced one.
#include <string>

namespace heed::config_suggest {

// The closest known key to `path` (e.g. training.lerning_rate -> training.learning_rate, or
// training.beam -> decoding.beam), or "" when nothing is close enough to be a useful guess.
std::string closest_key(const std::string& path);

// An example field inside a section, for messages: "model.gru" -> "model.gru.emb_dim".
std::string first_field_in(const std::string& section);

}  // namespace heed::config_suggest
