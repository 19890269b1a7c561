// The graph directory reader: the input, split at NUL bytes, becomes features.txt, labels.txt,
// edges.txt, train.txt, val.txt, test.txt and meta.json (a missing part: the file is absent);
// its first byte chooses the read options. Either a graph or a heed::Error; every graph read is
// consistent: offsets, columns, labels, edges and splits in range, edges sorted and each once.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "graph/graph_data.hpp"

namespace {

const char* const kFiles[] = {"features.txt", "labels.txt", "edges.txt", "train.txt",
                              "val.txt",      "test.txt",   "meta.json"};

void check(const heed::GraphData& g) {
  using heed::fuzz::broken;
  if (g.feature_offsets.size() != size_t(g.nodes) + 1 || g.feature_offsets.front() != 0 ||
      g.feature_offsets.back() != int64_t(g.feature_columns.size()) ||
      g.feature_columns.size() != g.feature_values.size())
    broken("feature rows do not add up");
  if (!std::is_sorted(g.feature_offsets.begin(), g.feature_offsets.end())) broken("feature offsets decrease");
  for (int32_t c : g.feature_columns)
    if (c < 0 || c >= g.features) broken("feature column out of range");
  if (!g.labels.empty() && g.labels.size() != size_t(g.nodes)) broken("labels for some nodes only");
  for (int32_t label : g.labels)
    if (label < 0 || label >= g.classes) broken("label out of range");
  for (size_t i = 0; i < g.edges.size(); ++i) {
    const auto [a, b] = g.edges[i];
    if (a < 0 || a >= b || b >= g.nodes) broken("edge out of range or not i < j");
    if (i > 0 && !(g.edges[i - 1] < g.edges[i])) broken("edges not sorted or repeated");
  }
  for (const auto* split : {&g.train, &g.val, &g.test})
    for (int32_t node : *split)
      if (node < 0 || node >= g.nodes) broken("split node out of range");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace heed;
  if (size < 1) return 0;
  const std::string dir = fuzz::scratch_path("graph");
  ::mkdir(dir.c_str(), 0755);
  const std::string input = fuzz::text(data + 1, size - 1);
  size_t start = 0;
  for (const char* file : kFiles) {
    const std::string path = dir + "/" + file;
    std::remove(path.c_str());
    if (start > input.size()) continue;
    const size_t end = std::min(input.find('\0', start), input.size());
    const std::string content = input.substr(start, end - start);
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(content.data(), 1, content.size(), f) != content.size()) fuzz::broken("cannot write " + path);
    std::fclose(f);
    start = end + 1;
  }
  GraphReadOptions options;
  options.labels_and_splits = data[0] & 1;
  options.normalize_features = data[0] & 2;
  fuzz::expect_errors_only([&] { check(read_graph(dir, options)); });
  return 0;
}
