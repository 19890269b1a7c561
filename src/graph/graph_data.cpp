#include "graph/graph_data.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string_view>

#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/parse_number.hpp"
#include "util/text_lines.hpp"

namespace heed {
namespace {

namespace fs = std::filesystem;

// Reads one file line by line; errors are "FILE:LINE: message".
class Lines {
 public:
  explicit Lines(const std::string& path) : reader_(path), path_(path) {}
  bool next(std::string& line) {
    if (!reader_.next(line)) return false;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return true;
  }
  [[noreturn]] void fail(const std::string& message) const {
    throw Error(path_ + ":" + std::to_string(reader_.line_number()) + ": " + message);
  }
  size_t line_number() const { return reader_.line_number(); }
  const std::string& path() const { return path_; }

 private:
  LineReader reader_;
  std::string path_;
};

// The whitespace-separated fields of a line.
std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

template <class T>
T number(std::string_view text, const Lines& in, const char* what) {
  const std::optional<T> value = parse_number<T>(text);
  if (!value)
    in.fail(std::string(what) + " '" + std::string(text) + "' is not a" +
            (std::is_integral_v<T> ? "n integer" : " number"));
  return *value;
}

int32_t node_id(std::string_view text, const Lines& in, int64_t nodes) {
  const auto id = number<int64_t>(text, in, "node id");
  if (id < 0 || id >= nodes)
    in.fail("node id " + std::to_string(id) + " out of range (the graph has " + std::to_string(nodes) + " nodes, 0 … " +
            std::to_string(nodes - 1) + ")");
  return static_cast<int32_t>(id);
}

std::string file_in(const std::string& dir, const std::string& name) {
  const std::string path = (fs::path(dir) / name).string();
  if (!fs::is_regular_file(path)) throw Error("graph directory " + dir + ": missing " + name);
  return path;
}

void read_features(const std::string& dir, GraphData& g) {
  Lines in(file_in(dir, "features.txt"));
  g.feature_offsets.push_back(0);
  std::string line;
  while (in.next(line)) {
    const size_t bar = line.find('|');
    if (bar == std::string::npos) in.fail("expected 'columns | values' (no '|')");
    const auto columns = fields(std::string_view(line).substr(0, bar));
    const auto values = fields(std::string_view(line).substr(bar + 1));
    if (columns.size() != values.size())
      in.fail(std::to_string(columns.size()) + " feature columns but " + std::to_string(values.size()) + " values");
    for (size_t k = 0; k < columns.size(); ++k) {
      const auto column = number<int64_t>(columns[k], in, "feature column");
      // The count of columns, column + 1, must fit an int32 too.
      if (column < 0 || column >= INT32_MAX) in.fail("feature column " + std::to_string(column) + " out of range");
      if (k > 0 && column <= g.feature_columns.back()) in.fail("feature columns must increase along a line");
      g.feature_columns.push_back(static_cast<int32_t>(column));
      const float value = number<float>(values[k], in, "feature value");
      // from_chars reads "nan" and "inf": one would make NaNs of its node's row and neighbours.
      if (!std::isfinite(value)) in.fail("feature value '" + std::string(values[k]) + "' is not finite");
      g.feature_values.push_back(value);
      g.features = std::max<int64_t>(g.features, column + 1);
    }
    g.feature_offsets.push_back(static_cast<int64_t>(g.feature_columns.size()));
  }
  g.nodes = static_cast<int64_t>(g.feature_offsets.size()) - 1;
  if (g.nodes == 0) throw Error(in.path() + ": no nodes (the file is empty)");
  if (g.nodes > INT32_MAX) throw Error(in.path() + ": more than 2^31 nodes");
  if (g.features == 0) throw Error(in.path() + ": no node has a feature (every line is ' | ')");
}

void read_labels(const std::string& dir, GraphData& g) {
  Lines in(file_in(dir, "labels.txt"));
  std::string line;
  while (in.next(line)) {
    const auto f = fields(line);
    if (f.size() != 1) in.fail("expected one class per line, found " + std::to_string(f.size()) + " fields");
    if (static_cast<int64_t>(g.labels.size()) == g.nodes)
      in.fail("more labels than nodes (features.txt has " + std::to_string(g.nodes) + " lines)");
    const auto label = number<int64_t>(f[0], in, "class");
    if (label < 0 || label >= INT32_MAX) in.fail("class " + std::to_string(label) + " out of range");
    g.labels.push_back(static_cast<int32_t>(label));
    g.classes = std::max<int64_t>(g.classes, label + 1);
  }
  if (static_cast<int64_t>(g.labels.size()) != g.nodes)
    throw Error(in.path() + ": " + std::to_string(g.labels.size()) + " labels for " + std::to_string(g.nodes) +
                " nodes (features.txt lines)");
}

void read_edges(const std::string& dir, GraphData& g) {
  Lines in(file_in(dir, "edges.txt"));
  std::string line;
  while (in.next(line)) {
    const auto f = fields(line);
    if (f.empty()) continue;
    if (f.size() != 2) in.fail("expected 'i j' (two node ids), found " + std::to_string(f.size()) + " fields");
    const int32_t a = node_id(f[0], in, g.nodes), b = node_id(f[1], in, g.nodes);
    if (a != b) g.edges.emplace_back(std::min(a, b), std::max(a, b));  // self-loops: every node gets one anyway
  }
  std::sort(g.edges.begin(), g.edges.end());
  g.edges.erase(std::unique(g.edges.begin(), g.edges.end()), g.edges.end());
}

// The three splits: ids in range, none twice, no node in two splits.
void read_splits(const std::string& dir, GraphData& g) {
  std::vector<int8_t> owner(g.nodes, -1);
  const char* names[] = {"train.txt", "val.txt", "test.txt"};
  std::vector<int32_t>* splits[] = {&g.train, &g.val, &g.test};
  for (int s = 0; s < 3; ++s) {
    Lines in(file_in(dir, names[s]));
    std::string line;
    while (in.next(line)) {
      const auto f = fields(line);
      if (f.empty()) continue;
      if (f.size() != 1) in.fail("expected one node id per line, found " + std::to_string(f.size()) + " fields");
      const int32_t id = node_id(f[0], in, g.nodes);
      if (owner[id] == s) in.fail("node " + std::to_string(id) + " is listed twice");
      if (owner[id] >= 0) in.fail("node " + std::to_string(id) + " is already in " + names[owner[id]]);
      owner[id] = static_cast<int8_t>(s);
      splits[s]->push_back(id);
    }
    if (splits[s]->empty()) throw Error(in.path() + ": no nodes (every split needs at least one)");
  }
}

// meta.json: the sizes it states override what the files suggest (a feature or class that never
// occurs still counts) and are checked against what was read.
void apply_meta(const std::string& dir, GraphData& g) {
  const std::string path = (fs::path(dir) / "meta.json").string();
  if (!fs::exists(path)) return;
  nlohmann::json meta = nlohmann::json::parse(read_file(path), nullptr, false);
  if (!meta.is_object()) throw Error(path + ": not a JSON object");
  auto count = [&](const char* key) -> int64_t {
    if (!meta.contains(key)) return -1;
    // Below 2^31, as the files' columns and classes are: a size past it would overflow the model's.
    if (!meta[key].is_number_integer() || meta[key].get<int64_t>() < 0 || meta[key].get<int64_t>() >= INT32_MAX)
      throw Error(path + ": \"" + key + "\" must be an integer from 0 to 2^31 - 2");
    return meta[key].get<int64_t>();
  };
  auto expect = [&](const char* key, int64_t actual, const std::string& what) {
    const int64_t stated = count(key);
    if (stated >= 0 && stated != actual)
      throw Error(path + ": \"" + key + "\" is " + std::to_string(stated) + " but " + what + " has " +
                  std::to_string(actual));
  };
  if (const int64_t f = count("features"); f >= 0) {
    if (f < g.features)
      throw Error(path + ": \"features\" is " + std::to_string(f) + " but features.txt uses column " +
                  std::to_string(g.features - 1));
    g.features = f;
  }
  if (const int64_t c = count("classes"); c >= 0 && !g.labels.empty()) {
    if (c < g.classes)
      throw Error(path + ": \"classes\" is " + std::to_string(c) + " but labels.txt has class " +
                  std::to_string(g.classes - 1));
    g.classes = c;
  }
  expect("nodes", g.nodes, "features.txt");
  expect("undirected_edges", static_cast<int64_t>(g.edges.size()), "edges.txt");
  if (!g.train.empty()) {
    expect("train", static_cast<int64_t>(g.train.size()), "train.txt");
    expect("val", static_cast<int64_t>(g.val.size()), "val.txt");
    expect("test", static_cast<int64_t>(g.test.size()), "test.txt");
  }
}

void normalize_rows(const std::string& dir, GraphData& g) {
  for (int64_t i = 0; i < g.nodes; ++i) {
    double total = 0;
    for (int64_t k = g.feature_offsets[i]; k < g.feature_offsets[i + 1]; ++k) total += g.feature_values[k];
    if (total == 0) continue;
    for (int64_t k = g.feature_offsets[i]; k < g.feature_offsets[i + 1]; ++k) {
      // Values of both signs can sum to almost nothing: a share past the float range is refused.
      const double share = g.feature_values[k] / total;
      if (!(std::abs(share) <= std::numeric_limits<float>::max()))
        throw Error((fs::path(dir) / "features.txt").string() + ": node " + std::to_string(i) + ": its values sum to " +
                    std::to_string(total) + ", too near 0 to normalise by (data.normalize_features)");
      g.feature_values[k] = static_cast<float>(share);
    }
  }
}

}  // namespace

GraphData read_graph(const std::string& dir, const GraphReadOptions& options) {
  if (dir.empty()) throw UsageError("data.graph: no graph directory given");
  if (!fs::is_directory(dir)) throw Error("graph directory " + dir + " does not exist");
  GraphData g;
  read_features(dir, g);
  if (options.labels_and_splits) read_labels(dir, g);
  read_edges(dir, g);
  if (options.labels_and_splits) read_splits(dir, g);
  apply_meta(dir, g);
  if (options.normalize_features) normalize_rows(dir, g);
  return g;
}

}  // namespace heed
