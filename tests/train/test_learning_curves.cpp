// Learning curves: metrics.jsonl records become the points of the right lines, damaged files are
// errors naming the line, and the picture puts each point where its axes say.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <limits>

#include "../temp_dir.hpp"
#include "train/learning_curves.hpp"
#include "train/model_dir.hpp"
#include "util/error.hpp"
#include "util/line_chart.hpp"

using namespace heed;

namespace {
std::string write_metrics(const std::string& name, const std::string& text) {
  static const test::TempDir dir("curves");  // removed at exit
  const std::string path = dir / name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}
}  // namespace

TEST_CASE("axis ticks are steps of 1, 2 or 5 x 10^k that cover the range", "[curves]") {
  CHECK(axis_ticks(0, 7.3, 5) == std::vector<double>{0, 2, 4, 6, 8});
  CHECK(axis_ticks(5.2, 8.3, 5) == std::vector<double>{5, 6, 7, 8, 9});
  CHECK(axis_ticks(0, 200, 5) == std::vector<double>{0, 50, 100, 150, 200});
  const auto small = axis_ticks(0.0012, 0.0031, 4);
  CHECK(small.front() <= 0.0012);
  CHECK(small.back() >= 0.0031);
  CHECK(small.size() <= 6);
  CHECK(axis_ticks(3, 3, 5).size() >= 2);  // one value: a range around it
}

TEST_CASE("axis ticks of extreme ranges are finite, increasing and cover the range", "[curves]") {
  constexpr double kLargest = std::numeric_limits<double>::max();
  const std::vector<std::pair<double, double>> ranges = {{-1e308, 1e308},        {kLargest, kLargest},
                                                         {-kLargest, -kLargest}, {1e17, 1e17 + 16},
                                                         {0, kLargest},          {-5e-320, 5e-320}};
  for (const auto& [low, high] : ranges) {
    INFO(low << " .. " << high);
    const std::vector<double> ticks = axis_ticks(low, high, 5);  // returns: 1e17 used to loop forever
    REQUIRE(ticks.size() >= 2);
    CHECK(ticks.size() <= 12);
    CHECK(ticks.front() <= low);
    CHECK(ticks.back() >= high);
    for (size_t i = 0; i < ticks.size(); ++i) {
      CHECK(std::isfinite(ticks[i]));
      if (i > 0) CHECK(ticks[i] > ticks[i - 1]);
    }
  }
}

TEST_CASE("read_run_curves takes train and valid records, and names a damaged line", "[curves]") {
  const std::string good = write_metrics("good.jsonl",
                                         R"({"type":"train","step":50,"elapsed":10,"loss":7.5}
{"type":"epoch","epoch":1}
{"type":"valid","step":100,"elapsed":21,"loss":6.0,"bleu":2.5}
{"type":"train","step":100,"elapsed":20,"loss":6.5}
{"type":"valid","step":200,"elapsed":41,"loss":5.5}
{"type":"train","step":150,"ela)");  // a last line cut by a kill: ignored
  const RunCurves run = read_run_curves(good, "a");
  REQUIRE(run.train_loss.size() == 2);
  CHECK(run.train_loss[1].step == 100);
  CHECK(run.train_loss[1].seconds == 20);
  CHECK(run.train_loss[1].value == 6.5);
  REQUIRE(run.dev_loss.size() == 2);
  CHECK(run.dev_loss[1].value == 5.5);
  REQUIRE(run.dev_bleu.size() == 1);  // the second validation had no BLEU
  CHECK(run.dev_bleu[0].value == 2.5);

  const std::string damaged = write_metrics("damaged.jsonl", "{\"type\":\"train\",\"step\":1,\"elapsed\":1,\"loss\":1}\n{oops\n");
  CHECK_THROWS_WITH(read_run_curves(damaged, "b"), damaged + ":2: not a JSON record");
  const std::string missing = write_metrics("missing.jsonl", "{\"type\":\"valid\",\"step\":1,\"loss\":1}\n");
  CHECK_THROWS_WITH(read_run_curves(missing, "c"),
                    missing + ":1: a valid record needs numbers \"step\", \"elapsed\" and \"loss\"");
  // JSON has no NaN: a non-finite loss is written as null, a point not drawn; a record whose type
  // is not a string is no training record.
  const std::string nulls = write_metrics("nulls.jsonl", R"({"type":"train","step":1,"elapsed":1,"loss":null}
{"type":5,"step":"x"}
{"type":"train","step":2,"elapsed":2,"loss":3}
)");
  const RunCurves with_nulls = read_run_curves(nulls, "e");
  REQUIRE(with_nulls.train_loss.size() == 2);
  CHECK(std::isnan(with_nulls.train_loss[0].value));
  CHECK(with_nulls.train_loss[1].value == 3);
  CHECK(learning_curves_svg({with_nulls}).find("nan") == std::string::npos);
  const std::string graph = write_metrics("graph.jsonl", "{\"type\":\"epoch\",\"epoch\":1,\"loss\":1}\n");
  CHECK_THROWS_AS(read_run_curves(graph, "d"), Error);
}

TEST_CASE("learning curves put each point where the axes say, one colour per run", "[curves]") {
  RunCurves a{"run-a", {{100, 60, 7}, {200, 120, 6}}, {{200, 125, 6.5}}, {{100, 61, 2}, {200, 125, 3.5}}};
  RunCurves b{"run-b", {{100, 30, 8}}, {}, {}};
  const std::string doc = learning_curves_svg({a, b});
  CHECK(doc.rfind("<svg ", 0) == 0);
  CHECK(doc.size() > 7);
  CHECK(doc.substr(doc.size() - 7) == "</svg>\n");
  // dev BLEU against updates (the first panel): x ticks 0..200, y ticks 0..4 over a 378 x 220
  // plot area at (64, 34): (100, 2) is at (253, 144), (200, 3.5) at (442, 61.5).
  CHECK(doc.find("points=\"253.0,144.0 442.0,61.5\"") != std::string::npos);
  CHECK(doc.find("run-a: best dev BLEU 3.50 at update 200") != std::string::npos);
  CHECK(doc.find(">run-b</text>") != std::string::npos);
  CHECK(doc.find("wall time (minutes)") != std::string::npos);
  CHECK(doc.find("#0072B2") != std::string::npos);  // run-a's colour
  CHECK(doc.find("#D55E00") != std::string::npos);  // run-b's

  const RunCurves extreme{"extreme", {{-1e308, 0, 1}, {1e308, 1, 1e308}}, {}, {}};  // a hand-edited log
  const std::string extreme_doc = learning_curves_svg({extreme});
  CHECK(extreme_doc.find("nan") == std::string::npos);
  CHECK(extreme_doc.find("inf") == std::string::npos);
}

TEST_CASE("run_name is the directory's last component", "[curves]") {
  CHECK(run_name("runs/a") == "a");
  CHECK(run_name("runs/a/") == "a");
  CHECK(run_name("/") == "run");
  CHECK(run_name(".") == "run");
}
