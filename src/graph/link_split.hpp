#pragma once
// The edges of a graph split for link prediction: a seeded shuffle holds out shares of them for
// validation and test, each paired with as many sampled non-edges (node pairs that are not
// edges of the whole graph). Training sees only the remaining edges, in its message passing and
// as positives.
#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "graph/graph_data.hpp"
#include "util/error.hpp"

namespace heed {

struct LinkSplit {
  std::vector<Edge> train, val, test;             // sorted
  std::vector<Edge> val_negative, test_negative;  // sampled non-edges, as many as val / test
};

// floor(share · edges) edges for validation and for test, the rest for training.
LinkSplit split_links(const GraphData& graph, double val_share, double test_share, uint64_t seed);

// `count` distinct uniform node pairs i < j that are not in `sorted_edges` nor in `exclude`
// (both sorted); next_u64() supplies the random bits. Throws when there are too few such pairs.
template <class Next>
std::vector<Edge> sample_non_edges(int64_t nodes, const std::vector<Edge>& sorted_edges,
                                   const std::vector<Edge>& exclude, int64_t count, Next&& next_u64) {
  const int64_t pairs = nodes * (nodes - 1) / 2;
  if (count > pairs - static_cast<int64_t>(sorted_edges.size() + exclude.size()))
    throw Error("link prediction: the graph has too few non-edges to sample " + std::to_string(count));
  auto known = [](const std::vector<Edge>& edges, const Edge& e) {
    return std::binary_search(edges.begin(), edges.end(), e);
  };
  std::vector<Edge> out;
  std::unordered_set<int64_t> taken;
  while (static_cast<int64_t>(out.size()) < count) {
    const auto a = static_cast<int32_t>(next_u64() % static_cast<uint64_t>(nodes));
    const auto b = static_cast<int32_t>(next_u64() % static_cast<uint64_t>(nodes));
    if (a == b) continue;
    const Edge e{std::min(a, b), std::max(a, b)};
    if (known(sorted_edges, e) || known(exclude, e) || !taken.insert(int64_t{e.first} * nodes + e.second).second)
      continue;
    out.push_back(e);
  }
  return out;
}

}  // namespace heed
