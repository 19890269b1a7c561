#pragma once
// Graph directories for the tests: a synthetic two-community graph (a stochastic block model
// whose features hint at the community), written in the format of graph/graph_data.hpp, and a
// writer for hand-made files.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace heed::test {

inline void write_text(const std::filesystem::path& path, const std::string& text) { std::ofstream(path) << text; }

// `nodes` nodes in `communities` communities (node i in community i % communities); an edge
// joins two nodes of one community with probability p_in, of different ones with p_out. Each node
// has 4 features of 15 per community: drawn from its community's with probability `signal`, else
// from all. Labels are the communities. Split: 10 training nodes per class, 20 % of the nodes for
// validation, the rest for test.
inline void write_communities(const std::filesystem::path& dir, int nodes = 200, int communities = 2,
                              double p_in = 0.08, double p_out = 0.008, double signal = 0.6, uint32_t seed = 5) {
  std::filesystem::create_directories(dir);
  std::mt19937 rng(seed);  // raw outputs only: the same graph with every standard library
  auto uniform = [&] { return rng() / 4294967296.0; };
  const int features = 15 * communities;
  std::string feature_lines, labels, edges, train, val, test;
  for (int i = 0; i < nodes; ++i) {
    const int community = i % communities;
    std::vector<int> columns;
    while (columns.size() < 4) {
      const int c =
          uniform() < signal ? 15 * community + static_cast<int>(rng() % 15) : static_cast<int>(rng() % features);
      if (std::find(columns.begin(), columns.end(), c) == columns.end()) columns.push_back(c);
    }
    std::sort(columns.begin(), columns.end());
    for (size_t k = 0; k < columns.size(); ++k) {
      if (k) feature_lines += ' ';
      feature_lines += std::to_string(columns[k]);
    }
    feature_lines += " | 1 1 1 1\n";
    labels += std::to_string(community) + "\n";
    for (int j = i + 1; j < nodes; ++j)
      if (uniform() < (community == j % communities ? p_in : p_out))
        edges += std::to_string(i) + " " + std::to_string(j) + "\n";
    (i < 10 * communities ? train : i < 10 * communities + nodes / 5 ? val : test) += std::to_string(i) + "\n";
  }
  write_text(dir / "features.txt", feature_lines);
  write_text(dir / "labels.txt", labels);
  write_text(dir / "edges.txt", edges);
  write_text(dir / "train.txt", train);
  write_text(dir / "val.txt", val);
  write_text(dir / "test.txt", test);
}

}  // namespace heed::test
