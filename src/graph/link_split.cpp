#include "graph/link_split.hpp"

#include <cmath>

namespace heed {
namespace {
// splitmix64 as a plain generator: the same sequence on every platform (std:: distributions
// are not specified bit for bit).
struct SplitMix {
  uint64_t state;
  uint64_t operator()() {
    uint64_t x = state += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
  }
};
}  // namespace

LinkSplit split_links(const GraphData& graph, double val_share, double test_share, uint64_t seed) {
  std::vector<Edge> edges = graph.edges;
  const auto n = static_cast<int64_t>(edges.size());
  const auto n_val = static_cast<int64_t>(std::floor(val_share * n)),
             n_test = static_cast<int64_t>(std::floor(test_share * n));
  if (n_val < 1 || n_test < 1 || n - n_val - n_test < 1)
    throw Error("link prediction: " + std::to_string(n) + " edges are too few to hold out validation and test edges");
  SplitMix next{seed};
  for (int64_t i = n - 1; i > 0; --i)
    std::swap(edges[i], edges[next() % static_cast<uint64_t>(i + 1)]);  // Fisher–Yates
  LinkSplit split;
  split.test.assign(edges.begin(), edges.begin() + n_test);
  split.val.assign(edges.begin() + n_test, edges.begin() + n_test + n_val);
  split.train.assign(edges.begin() + n_test + n_val, edges.end());
  for (auto* part : {&split.train, &split.val, &split.test}) std::sort(part->begin(), part->end());
  // Every epoch draws as many non-edges of the training graph as it has edges: checked here,
  // before the run writes anything, not at the first step.
  const auto train_edges = static_cast<int64_t>(split.train.size());
  if (train_edges > graph.nodes * (graph.nodes - 1) / 2 - train_edges)
    throw Error("link prediction: the graph is too dense: its " + std::to_string(train_edges) +
                " training edges need as many non-edges per epoch, and it has fewer");
  split.test_negative = sample_non_edges(graph.nodes, graph.edges, {}, n_test, next);
  std::vector<Edge> used = split.test_negative;
  std::sort(used.begin(), used.end());
  split.val_negative = sample_non_edges(graph.nodes, graph.edges, used, n_val, next);
  return split;
}

}  // namespace heed
