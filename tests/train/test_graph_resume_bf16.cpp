// A bf16 graph run stopped and resumed equals the run without a stop, bit for bit: the resumed
// run's products must read bf16 copies of the parameters it loaded, not of those it started
// from. Skipped on a CPU without bf16 (catch_main.cpp).
#include <catch2/catch.hpp>

#include "../graph/graph_fixture.hpp"
#include "../temp_dir.hpp"
#include "graph_runs.hpp"

using namespace heed;
using namespace heed::test;

TEST_CASE("a bf16 graph run stopped and resumed equals the run without a stop, bit for bit", "[gat][bf16]") {
  TempDir d("graph-resume-bf16");
  write_communities(d.path / "graph");
  Config c = community_config((d.path / "graph").string());
  c.training.precision = ComputePrecision::bf16;
  check_resume_is_exact(c, d.path);
}
