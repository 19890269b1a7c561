#pragma once
// A graph for the graph tasks, read from a directory of plain-text files (README.md, "Graph
// directories"); node ids are 0-based line numbers of features.txt:
//   features.txt   line i: node i's non-zero feature columns, " | ", their values
//   labels.txt     line i: node i's class (0-based)
//   edges.txt      "i j" per line: an undirected edge (either order; repeats count once)
//   train.txt, val.txt, test.txt   one node id per line: the node-classification split
//   meta.json      optional: "features" and "classes" (else the largest column / class + 1);
//                  any of "nodes", "undirected_edges", "train", "val", "test" present must match
// Every error names the file and line (heed::Error). Plain data, no tensors: the tasks build
// their sparse structures from it.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace heed {

using Edge = std::pair<int32_t, int32_t>;  // undirected: first < second

struct GraphData {
  int64_t nodes = 0, features = 0, classes = 0;
  // Features in compressed sparse rows: node i's entries are feature_offsets[i] … [i+1] − 1.
  std::vector<int64_t> feature_offsets;
  std::vector<int32_t> feature_columns;
  std::vector<float> feature_values;
  std::vector<int32_t> labels;            // [nodes]; empty without labels.txt
  std::vector<Edge> edges;                // undirected, i < j, sorted, each once
  std::vector<int32_t> train, val, test;  // empty without the split files
};

struct GraphReadOptions {
  bool labels_and_splits = true;   // node classification needs them; link prediction does not
  bool normalize_features = true;  // each node's feature values scaled to sum 1 (zero rows stay 0)
};

GraphData read_graph(const std::string& dir, const GraphReadOptions& options);

}  // namespace heed
