// Reading graph directories: a hand-made graph read back exactly (features normalised, edges
// deduplicated and ordered, meta.json applied), and every kind of bad file refused with one
// error naming the file and the line; the link split's parts and sampled non-edges.
#include <catch2/catch.hpp>

#include <set>

#include "../temp_dir.hpp"
#include "graph/graph_data.hpp"
#include "graph/link_split.hpp"
#include "graph_fixture.hpp"

using namespace heed;
using heed::test::TempDir;
using heed::test::write_text;

namespace {

// 4 nodes, 5 features; edges given in both orders, once twice, one self-loop.
void write_small(const TempDir& d) {
  write_text(d.path / "features.txt", "0 3 | 1 3\n | \n1 | 2.5\n2 4 | 1 1\n");
  write_text(d.path / "labels.txt", "0\n2\n1\n0\n");
  write_text(d.path / "edges.txt", "0 1\n2 1\n1 2\n3 3\n0 3\n");
  write_text(d.path / "train.txt", "0\n");
  write_text(d.path / "val.txt", "1\n3\n");
  write_text(d.path / "test.txt", "2\n");
}

std::string error_of(const std::string& dir, bool labels = true) {
  GraphReadOptions o;
  o.labels_and_splits = labels;
  try {
    read_graph(dir, o);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("read_graph: features normalised per row, edges deduplicated, splits, meta.json") {
  TempDir d("graph-read");
  write_small(d);
  GraphData g = read_graph(d.path.string(), {});
  CHECK(g.nodes == 4);
  CHECK(g.features == 5);
  CHECK(g.classes == 3);
  CHECK(g.feature_offsets == std::vector<int64_t>{0, 2, 2, 3, 5});
  CHECK(g.feature_columns == std::vector<int32_t>{0, 3, 1, 2, 4});
  CHECK(g.feature_values == std::vector<float>{0.25f, 0.75f, 1.f, 0.5f, 0.5f});  // node 1 has none: stays empty
  CHECK(g.labels == std::vector<int32_t>{0, 2, 1, 0});
  CHECK(g.edges == std::vector<Edge>{{0, 1}, {0, 3}, {1, 2}});  // the self-loop dropped: every node gets one anyway
  CHECK(g.train == std::vector<int32_t>{0});
  CHECK(g.val == std::vector<int32_t>{1, 3});
  CHECK(g.test == std::vector<int32_t>{2});

  GraphReadOptions raw;
  raw.normalize_features = false;
  CHECK(read_graph(d.path.string(), raw).feature_values == std::vector<float>{1.f, 3.f, 2.5f, 1.f, 1.f});
  // meta.json can widen the feature and class counts, and must agree on the rest
  write_text(d.path / "meta.json", R"({"nodes": 4, "features": 9, "classes": 5, "undirected_edges": 3, "train": 1})");
  g = read_graph(d.path.string(), {});
  CHECK(g.features == 9);
  CHECK(g.classes == 5);
  write_text(d.path / "meta.json", R"({"undirected_edges": 4})");
  CHECK_THAT(error_of(d.path.string()), Catch::Contains("meta.json: \"undirected_edges\" is 4 but edges.txt has 3"));
  write_text(d.path / "meta.json", R"({"features": 4})");
  CHECK_THAT(error_of(d.path.string()), Catch::Contains("features.txt uses column 4"));
  // A size past what the files could hold would overflow the model's shapes (2^62 classes: a
  // heap overflow when the output layer was made).
  for (const char* meta : {R"({"classes": 4611686018427387904})", R"({"features": 2147483647})"}) {
    write_text(d.path / "meta.json", meta);
    CHECK_THAT(error_of(d.path.string()), Catch::Contains("must be an integer from 0 to 2^31 - 2"));
  }
}

TEST_CASE("read_graph: a row whose values nearly cancel is refused, not normalised to infinity", "[gat]") {
  TempDir d("graph-read-cancel");
  write_small(d);
  write_text(d.path / "features.txt", "0 3 | 1 3\n | \n0 1 2 | 1e30 -1e30 1e-30\n2 4 | 1 1\n");
  CHECK_THAT(error_of(d.path.string()),
             Catch::Contains("features.txt: node 2: its values sum to") && Catch::Contains("too near 0 to normalise"));
  GraphReadOptions raw;  // unnormalised, the values are read as they are
  raw.normalize_features = false;
  CHECK(read_graph(d.path.string(), raw).feature_values[2] == 1e30f);
}

TEST_CASE("read_graph: bad files are one error naming file and line") {
  TempDir d("graph-errors");
  const std::string dir = d.path.string();
  auto with = [&](const std::string& file, const std::string& text) {
    write_small(d);
    write_text(d.path / file, text);
    return error_of(dir);
  };
  CHECK(with("edges.txt", "0 1\n1 7\n") == dir + "/edges.txt:2: node id 7 out of range (the graph has 4 nodes, 0 … 3)");
  CHECK(with("edges.txt", "0 1\n-1 2\n") ==
        dir + "/edges.txt:2: node id -1 out of range (the graph has 4 nodes, 0 … 3)");
  CHECK(with("edges.txt", "0 1 2\n") == dir + "/edges.txt:1: expected 'i j' (two node ids), found 3 fields");
  CHECK(with("edges.txt", "0 x\n") == dir + "/edges.txt:1: node id 'x' is not an integer");
  CHECK(with("features.txt", "0 3 | 1\n") == dir + "/features.txt:1: 2 feature columns but 1 values");
  CHECK(with("features.txt", "0 3 1 3\n") == dir + "/features.txt:1: expected 'columns | values' (no '|')");
  CHECK(with("features.txt", "3 0 | 1 1\n") == dir + "/features.txt:1: feature columns must increase along a line");
  CHECK(with("features.txt", "0 | one\n") == dir + "/features.txt:1: feature value 'one' is not a number");
  CHECK(with("features.txt", "0 3 | 1 nan\n") == dir + "/features.txt:1: feature value 'nan' is not finite");
  CHECK(with("features.txt", "0 | 1\n0 | -inf\n") == dir + "/features.txt:2: feature value '-inf' is not finite");
  // column + 1 and class + 1 are counts: the largest int32 itself is out of range
  CHECK(with("features.txt", "2147483647 | 1\n") == dir + "/features.txt:1: feature column 2147483647 out of range");
  CHECK(with("labels.txt", "0\n2147483647\n") == dir + "/labels.txt:2: class 2147483647 out of range");
  CHECK(with("features.txt", "") == dir + "/features.txt: no nodes (the file is empty)");
  CHECK(with("labels.txt", "0\n1\n") == dir + "/labels.txt: 2 labels for 4 nodes (features.txt lines)");
  CHECK(with("labels.txt", "0\n1 2\n") == dir + "/labels.txt:2: expected one class per line, found 2 fields");
  CHECK(with("labels.txt", "0\n1\n2\n3\n4\n") ==
        dir + "/labels.txt:5: more labels than nodes (features.txt has 4 lines)");
  CHECK(with("val.txt", "1\n0\n") == dir + "/val.txt:2: node 0 is already in train.txt");
  CHECK(with("test.txt", "2\n2\n") == dir + "/test.txt:2: node 2 is listed twice");
  CHECK(with("test.txt", "4\n") == dir + "/test.txt:1: node id 4 out of range (the graph has 4 nodes, 0 … 3)");
  CHECK(with("train.txt", "") == dir + "/train.txt: no nodes (every split needs at least one)");
  write_small(d);
  std::filesystem::remove(d.path / "labels.txt");
  CHECK(error_of(dir) == "graph directory " + dir + ": missing labels.txt");
  CHECK(error_of(dir, false) == "(no error)");  // link prediction needs no labels
  CHECK(error_of(dir + "/nowhere") == "graph directory " + dir + "/nowhere does not exist");
}

TEST_CASE("split_links: disjoint parts of the right sizes, non-edges that are not edges, reproducible") {
  TempDir d("graph-links");
  heed::test::write_communities(d.path, 120);
  GraphReadOptions o;
  o.labels_and_splits = false;
  const GraphData g = read_graph(d.path.string(), o);
  const int64_t E = static_cast<int64_t>(g.edges.size());
  REQUIRE(E > 100);
  const LinkSplit s = split_links(g, 0.05, 0.1, 7);
  CHECK(static_cast<int64_t>(s.val.size()) == E / 20);
  CHECK(static_cast<int64_t>(s.test.size()) == E / 10);
  CHECK(s.train.size() + s.val.size() + s.test.size() == g.edges.size());
  std::set<Edge> all(g.edges.begin(), g.edges.end()), seen;
  for (const auto* part : {&s.train, &s.val, &s.test})
    for (const Edge& e : *part) {
      CHECK(all.count(e) == 1);
      CHECK(seen.insert(e).second);  // each edge in one part only
    }
  CHECK(s.val_negative.size() == s.val.size());
  CHECK(s.test_negative.size() == s.test.size());
  std::set<Edge> negatives;
  for (const auto* part : {&s.val_negative, &s.test_negative})
    for (const Edge& e : *part) {
      CHECK(e.first < e.second);
      CHECK(all.count(e) == 0);
      CHECK(negatives.insert(e).second);
    }
  const LinkSplit again = split_links(g, 0.05, 0.1, 7), other = split_links(g, 0.05, 0.1, 8);
  CHECK(again.test == s.test);
  CHECK(again.val_negative == s.val_negative);
  CHECK(other.test != s.test);
}

TEST_CASE("split_links: a graph too dense for each epoch's training non-edges is refused at the split") {
  // 20 nodes, 190 pairs, 120 edges: 6 + 6 held out, so 108 training edges need 108 non-edges of
  // the training graph, which has 82. The held-out non-edges alone (12 of 70) would fit.
  TempDir d("graph-dense");
  std::string features, edges;
  for (int i = 0; i < 20; ++i) features += "0 | 1\n";
  int count = 0;
  for (int i = 0; i < 20 && count < 120; ++i)
    for (int j = i + 1; j < 20 && count < 120; ++j, ++count)
      edges += std::to_string(i) + " " + std::to_string(j) + "\n";
  write_text(d.path / "features.txt", features);
  write_text(d.path / "edges.txt", edges);
  GraphReadOptions o;
  o.labels_and_splits = false;
  const GraphData g = read_graph(d.path.string(), o);
  REQUIRE(g.edges.size() == 120);
  try {
    split_links(g, 0.05, 0.05, 1);
    FAIL("expected heed::Error");
  } catch (const heed::Error& e) {
    CHECK(std::string(e.what()) ==
          "link prediction: the graph is too dense: its 108 training edges need as many non-edges per epoch, and it "
          "has fewer");
  }
}
