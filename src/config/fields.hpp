#pragma once
// The field table behind heed::Config (internal to src/config/): one entry per JSON leaf with
// its full path, its documentation, what it accepts and how to read/write it. Parsing,
// to_json, the JSON Schema and the unknown-key suggestions are all driven by this table.
#include <nlohmann/json.hpp>

#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"

namespace heed::config_fields {

// Thrown by Field::set when a value has the wrong type or is out of range; the message says
// what is allowed ("an integer >= 1"); the caller adds origin, path and the value.
struct BadValue : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Field {
  std::string path;                                         // full JSON path, e.g. "training.learning_rate"
  std::string doc;                                          // one sentence for the schema and `heed config` users
  std::string allowed;                                      // what the value may be, in words: "a number > 0"
  nlohmann::json schema;                                    // JSON Schema of the value (type, bounds, enum)
  bool string_only = false;                                 // `--set` takes the raw text for these (no JSON parsing)
  std::function<void(Config&, const nlohmann::json&)> set;  // validates; throws BadValue
  std::function<nlohmann::json(const Config&)> get;
};

// Every field, grouped by section.
const std::vector<Field>& all();
// The field with exactly this path, or nullptr.
const Field* find(std::string_view path);
// True when `path` is a section (an object holding fields), e.g. "model.gru" or "data.train".
bool is_section(std::string_view path);
// Description of a section for the schema ("" for the root).
std::string section_doc(std::string_view path);

}  // namespace heed::config_fields
