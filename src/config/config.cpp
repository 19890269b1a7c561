#include "config/config.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <system_error>
#include <unordered_set>

#include "config/fields.hpp"
#include "config/suggest.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/text_lines.hpp"
#include "util/utf8.hpp"

namespace heed {
namespace {

using nlohmann::json;
namespace fields = config_fields;

std::string join(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

// Shortened JSON of a value for error messages.
std::string show(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

[[noreturn]] void unknown_key(const std::string& origin, const std::string& path) {
  std::string message = origin + ": unknown key '" + path + "'";
  std::string guess = config_suggest::closest_key(path);
  if (!guess.empty()) message += " (did you mean " + guess + "?)";
  throw UsageError(message);
}

void set_field(const fields::Field& field, Config& config, const json& value, const std::string& origin) {
  try {
    field.set(config, value);
  } catch (const fields::BadValue& e) {
    throw UsageError(origin + ": " + field.path + ": got " + show(value) + ", expected " + e.what());
  }
}

// Walks the JSON object at `path`, setting every field and rejecting anything unknown.
void read_object(const json& object, const std::string& path, Config& config, const std::string& origin) {
  for (const auto& [key, value] : object.items()) {
    std::string child = join(path, key);
    // A key is one name: "training.learning_rate" at the top would set the field while escaping
    // the duplicate check, and --set (which writes the nested key) would lose to it.
    if (key.find('.') != std::string::npos) {
      const size_t dot = key.find('.');
      throw UsageError(origin + ": key '" + child + "': a key names one field or section; nest it as {\"" +
                       key.substr(0, dot) + "\": {\"" + key.substr(dot + 1) + "\": ...}}");
    }
    if (const auto* field = fields::find(child)) {
      set_field(*field, config, value, origin);
    } else if (fields::is_section(child)) {
      if (!value.is_object())
        throw UsageError(origin + ": " + child + ": got " + show(value) + ", expected an object (a section)");
      read_object(value, child, config, origin);
    } else {
      unknown_key(origin, child);
    }
  }
}

// A number as its shortest decimal that reads back as the same value ("0.05", not 0.0500000007).
template <class T>
std::string short_number(T v) {
  char buf[48];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

// Rules that involve more than one field.
void check_relations(const Config& c, const std::string& origin) {
  auto fail = [&](const std::string& message) { throw UsageError(origin + ": " + message); };
  const auto& t = c.model.transformer;
  if (t.d_model % t.heads != 0)
    fail("model.transformer.d_model (" + std::to_string(t.d_model) +
         ") must be a multiple of model.transformer.heads (" + std::to_string(t.heads) + ")");
  // A source of data.max_length tokens (translate cuts to it) plus its </s> must fit the
  // position table, or a dev or input line that long stops the run.
  if (c.model.arch == Arch::transformer && t.max_positions <= c.data.max_length)
    fail("model.transformer.max_positions (" + std::to_string(t.max_positions) + ") must exceed data.max_length (" +
         std::to_string(c.data.max_length) + "): a source of max_length tokens and its </s>");
  // A shift by N is a shift by 0 on N rows: wider shifts add nothing (and 2 · 2^30 + 1 overflows).
  const auto& n = c.model.ntm;
  if (c.model.arch == Arch::ntm && n.shift_width >= n.memory_rows)
    fail("model.ntm.shift_width (" + std::to_string(n.shift_width) + ") must be less than model.ntm.memory_rows (" +
         std::to_string(n.memory_rows) + "): shifts wrap around the memory");
  const auto& g = c.model.gru;
  if (g.tie_output && g.readout_dim != g.emb_dim)
    fail("model.gru.tie_output needs model.gru.readout_dim (" + std::to_string(g.readout_dim) +
         ") == model.gru.emb_dim (" + std::to_string(g.emb_dim) + ")");
  if (c.model.share_embeddings && !c.tokenizer.joint)
    fail("model.share_embeddings needs tokenizer.joint = true (one vocabulary for both sides)");
  if (c.data.train_src.size() != c.data.train_tgt.size())
    fail("data.train.src has " + std::to_string(c.data.train_src.size()) + " file(s) but data.train.tgt has " +
         std::to_string(c.data.train_tgt.size()) + "; they must pair up");
  if (c.data.dev_src.empty() != c.data.dev_tgt.empty()) fail("data.dev.src and data.dev.tgt must be given together");
  if (c.training.average_last > c.training.keep_last)
    fail("training.average_last (" + std::to_string(c.training.average_last) + ") needs training.keep_last (" +
         std::to_string(c.training.keep_last) + ") at least as large: only kept checkpoints can be averaged");
  if (c.data.max_length_ratio != 0 && c.data.max_length_ratio < 1)
    fail("data.max_length_ratio: got " + json(c.data.max_length_ratio).dump() + ", expected 0 (off) or a number >= 1");
  if (c.training.schedule == ScheduleKind::inverse_sqrt && c.training.warmup_steps < 1)
    fail("training.warmup_steps: the inverse-sqrt schedule needs warmup_steps >= 1 (got " +
         std::to_string(c.training.warmup_steps) + ")");
  if ((c.training.schedule == ScheduleKind::linear || c.training.schedule == ScheduleKind::cosine) &&
      c.training.max_steps <= 0 && c.training.max_time <= 0)
    fail("training.schedule " + std::string(name_of(c.training.schedule)) +
         " needs training.max_steps or training.max_time > 0 (it decays to min_learning_rate at the end of that "
         "budget)");
  if (c.decoding.sampling.kind == SamplingKind::none && c.decoding.nbest > c.decoding.beam)
    fail("decoding.nbest " + std::to_string(c.decoding.nbest) + " needs a beam at least as wide (decoding.beam is " +
         std::to_string(c.decoding.beam) + ")");
  if (c.training.min_learning_rate > c.training.learning_rate)
    fail("training.min_learning_rate must not exceed training.learning_rate");
  const bool graph_task = c.task != Task::translation;
  if (graph_task && c.model.arch != Arch::gat)
    fail("task " + std::string(name_of(c.task)) + " needs model.arch = gat (got " + std::string(name_of(c.model.arch)) +
         ")");
  if (!graph_task && c.model.arch == Arch::gat)
    fail("model.arch gat is a graph model: set task to node-classification or link-prediction");
  if (c.data.val_edges + c.data.test_edges >= 1)
    fail("data.val_edges + data.test_edges must leave edges for training (got " + short_number(c.data.val_edges) +
         " + " + short_number(c.data.test_edges) + ")");
}

// Parses JSON text, naming file, line and column on a syntax error and rejecting duplicate keys
// (nlohmann would silently keep the last one).
json parse_text(const std::string& text, const std::string& origin) {
  struct Frame {
    bool is_object;
    std::vector<std::string> keys;  // in order, for the path of a duplicate
    std::unordered_set<std::string> seen;
  };
  std::vector<Frame> stack;
  // Deeper than any config: nlohmann's dump, which error messages use, recurses a level a call.
  constexpr size_t kMaxDepth = 64;
  auto on_event = [&](int, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (stack.size() >= kMaxDepth)
          throw UsageError(origin + ": nested more than " + std::to_string(kMaxDepth) + " levels deep");
        stack.push_back({event == json::parse_event_t::object_start, {}, {}});
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end: stack.pop_back(); break;
      case json::parse_event_t::key: {
        auto key = parsed.get<std::string>();
        auto& keys = stack.back().keys;
        if (!stack.back().seen.insert(key).second) {
          std::string path;
          for (auto& frame : stack)
            if (frame.is_object && &frame != &stack.back() && !frame.keys.empty()) path = join(path, frame.keys.back());
          throw UsageError(origin + ": duplicate key '" + join(path, key) + "'");
        }
        keys.push_back(key);
        break;
      }
      default: break;
    }
    return true;
  };
  try {
    return json::parse(text, on_event);
  } catch (const json::parse_error& e) {
    // e.byte is the 1-based offset of the last character read.
    size_t end = std::min<size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    size_t line = 1 + std::count(text.begin(), text.begin() + end, '\n');
    size_t line_start = text.rfind('\n', end == 0 ? 0 : end - 1);
    size_t column = end - (line_start == std::string::npos || end == 0 ? 0 : line_start + 1) + 1;
    if (end > 0 && text[end - 1] == '\n') column = 1;
    std::string detail = e.what();
    auto colon = detail.find(": ", detail.find("parse error"));
    if (colon != std::string::npos) detail = detail.substr(colon + 2);
    throw UsageError(origin + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + detail);
  } catch (const json::exception& e) {  // a number beyond every numeric type (out_of_range.406)
    std::string detail = e.what();
    detail = detail.substr(detail.find(']') + 2);
    throw UsageError(origin + ": " + (detail.size() > 80 ? detail.substr(0, 77) + "..." : detail));
  }
}

void put(json& object, const std::string& path, const json& value) {
  json* node = &object;
  size_t start = 0;
  for (;;) {
    size_t dot = path.find('.', start);
    std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (dot == std::string::npos) {
      (*node)[key] = value;
      return;
    }
    json& next = (*node)[key];
    if (next.is_null()) next = json::object();
    if (!next.is_object())
      throw UsageError("--set " + path + ": " + path.substr(0, dot) + " is not an object in the config file");
    node = &next;
    start = dot + 1;
  }
}

}  // namespace

Config default_config() { return Config{}; }

int input_length_limit(const Config& config) {
  return config.decoding.max_input_length > 0 ? config.decoding.max_input_length : config.data.max_length;
}

std::string check_field_value(const std::string& path, const std::string& text) {
  const auto* field = fields::find(path);
  if (!field) return "no config field " + path;
  json value = field->string_only ? json(text) : json::parse(text, nullptr, false);
  if (value.is_discarded()) value = text;
  Config scratch;
  try {
    field->set(scratch, value);
  } catch (const fields::BadValue& e) {
    return "got " + show(value) + ", expected " + e.what();
  }
  return "";
}

std::vector<FieldInfo> fields_of_section(std::string_view section) {
  const Config defaults;
  std::vector<FieldInfo> out;
  for (const auto& field : fields::all()) {
    const auto dot = field.path.rfind('.');
    if (dot == std::string::npos || std::string_view(field.path).substr(0, dot) != section) continue;
    const json value = field.get(defaults);
    out.push_back({field.path, field.doc, field.allowed, value.dump(), value.is_boolean()});
  }
  return out;
}

Config config_from_json(const json& j, const std::string& origin) {
  if (!j.is_object()) throw UsageError(origin + ": expected a JSON object at the top level, got " + show(j));
  Config config;
  read_object(j, "", config, origin);
  check_relations(config, origin);
  return config;
}

json to_json(const Config& config) {
  json j = json::object();
  for (const auto& field : fields::all()) put(j, field.path, field.get(config));
  return j;
}

void apply_override(json& j, const std::string& key_eq_value, const std::string& flag) {
  const std::string origin = flag.empty() ? "--set " + key_eq_value : flag;
  auto eq = key_eq_value.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UsageError(origin + ": expected KEY=VALUE, e.g. --set training.learning_rate=0.0005");
  std::string key = key_eq_value.substr(0, eq), text = key_eq_value.substr(eq + 1);
  // A config is JSON text: every string in it is UTF-8 (nlohmann cannot even write another).
  if (find_invalid_utf8(key_eq_value) != std::string::npos)
    throw UsageError("--set " + key + ": the value is not valid UTF-8");
  const auto* field = fields::find(key);
  if (!field) {
    if (fields::is_section(key))
      throw UsageError(origin + ": " + key + " is a section; set one field at a time, e.g. " +
                       config_suggest::first_field_in(key));
    unknown_key("--set", key);
  }
  json value = field->string_only ? json(text) : json::parse(text, nullptr, false);
  if (value.is_discarded()) value = text;
  if (!j.is_object()) throw UsageError(origin + ": the config is not a JSON object");
  Config scratch;
  set_field(*field, scratch, value, flag.empty() ? "--set" : flag);
  put(j, key, value);
}

Config load_config(const std::string& path, const std::vector<std::string>& overrides) {
  json j = json::object();
  std::string origin = path.empty() ? "--set" : path;
  if (!path.empty()) {
    std::error_code unreadable;  // reported by read_file below
    if (std::filesystem::is_directory(path, unreadable)) throw UsageError("config file " + path + " is a directory");
    std::string text;
    try {
      text = read_file(path);
    } catch (const Error& e) {
      throw UsageError(std::string("config file: ") + e.what());
    }
    return config_from_text(text, path, overrides);
  }
  for (const auto& kv : overrides) apply_override(j, kv);
  return config_from_json(j, origin);
}

Config config_from_text(const std::string& text, const std::string& origin, const std::vector<std::string>& overrides) {
  json j = parse_text(text, origin);
  if (!j.is_object()) throw UsageError(origin + ": expected a JSON object at the top level, got " + show(j));
  for (const auto& kv : overrides) apply_override(j, kv);
  return config_from_json(j, origin);
}

Config with_overrides(const Config& base, const std::vector<std::string>& overrides, const std::string& origin) {
  if (overrides.empty()) return base;
  json j = to_json(base);
  for (const auto& kv : overrides) apply_override(j, kv);
  return config_from_json(j, origin);
}

void save_config(const Config& config, const std::string& path) {
  write_file_atomic(path, to_json(config).dump(2) + "\n");
}

Config load_model_config(const std::string& model_dir) {
  std::string path = (std::filesystem::path(model_dir) / "config.json").string();
  if (!std::filesystem::exists(path)) throw UsageError(model_dir + " is not a heed model directory (no config.json)");
  return config_from_json(parse_text(read_file(path), path), path);
}

FieldChange model_defining_change(const Config& trained, const Config& requested) {
  // The model's own section; the other architectures' sections do not define it.
  const std::string own = trained.model.arch == Arch::transformer ? "model.transformer."
                          : trained.model.arch == Arch::gat       ? "model.gat."
                          : trained.model.arch == Arch::ntm       ? "model.ntm."
                                                                  : "model.gru.";
  auto is_dropout = [](const std::string& path) {
    return path.size() >= 7 && path.compare(path.size() - 7, 7, "dropout") == 0;
  };
  for (const auto& field : fields::all()) {
    const std::string& path = field.path;
    const bool model_field = path.rfind("model.", 0) == 0 && !is_dropout(path) &&
                             (path.find('.', 6) == std::string::npos || path.rfind(own, 0) == 0);
    const bool defining = path == "task" || model_field || path.rfind("tokenizer.", 0) == 0;
    if (!defining) continue;
    json a = field.get(trained), b = field.get(requested);
    if (a != b) return {path, a.dump(), b.dump()};
  }
  return {};
}

json config_schema() {
  json root = {{"$schema", "https://json-schema.org/draft/2020-12/schema"},
               {"title", "heed config"},
               {"description", "Configuration of heed (generated by `heed config schema`; see configs/README.md)."},
               {"type", "object"},
               {"additionalProperties", false},
               {"properties", json::object()}};
  Config defaults;
  for (const auto& field : fields::all()) {
    json* node = &root;
    std::string section;
    size_t start = 0;
    for (size_t dot; (dot = field.path.find('.', start)) != std::string::npos; start = dot + 1) {
      section = field.path.substr(0, dot);
      json& child = (*node)["properties"][field.path.substr(start, dot - start)];
      if (child.is_null())
        child = {{"type", "object"},
                 {"description", fields::section_doc(section)},
                 {"additionalProperties", false},
                 {"properties", json::object()}};
      node = &child;
    }
    json leaf = field.schema;
    leaf["description"] = field.doc;
    leaf["default"] = field.get(defaults);
    (*node)["properties"][field.path.substr(start)] = leaf;
  }
  return root;
}

}  // namespace heed
