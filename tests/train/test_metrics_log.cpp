// metrics.jsonl across a resume: the records up to the resumed position stay, later ones (the lost
// end of a killed run) and a line a kill cut short go, and a line a user added stays.
#include <catch2/catch.hpp>

#include "../temp_dir.hpp"

#include <fstream>
#include <nlohmann/json.hpp>

#include "train/metrics_log.hpp"
#include "util/text_lines.hpp"

using namespace heed;

TEST_CASE("MetricsLog: a resume keeps the records up to its position and any record without a numeric one") {
  test::TempDir dir("metrics-log");
  const std::string path = dir / "metrics.jsonl";
  std::ofstream(path) << R"({"type":"train","step":100})" << '\n'
                      << R"({"type":"note","step":"x"})" << '\n'
                      << R"({"type":"note"})" << '\n'
                      << R"({"type":"train","step":200})" << '\n'
                      << R"({"type":"tr)";
  {
    MetricsLog log(path, /*resume=*/true, "step", 150);
    log.write({{"type", "train"}, {"step", 200}});
  }
  CHECK(read_lines_utf8(path) == std::vector<std::string>{R"({"type":"train","step":100})",
                                                          R"({"type":"note","step":"x"})", R"({"type":"note"})",
                                                          R"({"step":200,"type":"train"})"});
  { MetricsLog fresh(path, /*resume=*/false, "step", 0); }
  CHECK(std::filesystem::file_size(path) == 0);  // a new run starts it afresh
}
