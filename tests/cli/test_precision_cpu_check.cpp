// The bf16 startup check on any CPU: oneDNN's ONEDNN_MAX_CPU_ISA=AVX2 hides bf16 dot products
// (as a CPU without them), so training.precision bf16 is one usage error line (exit 2) before
// anything is written, auto falls back to fp32 and says so, and translate --precision bf16 is
// refused the same way.
#include <catch2/catch.hpp>

#include "train_fixture.hpp"

using namespace heed;
using namespace heed::test;

TEST_CASE("bf16 on a CPU without it: a usage error naming the field; auto chooses fp32", "[cli][precision]") {
  TempDir dir("precision-check");
  write_reverse_corpus(dir.path.string(), "train", 50, 3);
  const std::string config = write_tiny_config(dir.path.string(), {{"max_steps", 2}});
  const std::string no_bf16 = "ONEDNN_MAX_CPU_ISA=AVX2 " + kHeed + " --threads 1 ";
  const std::string model = dir / "model";

  const Result bf16 = run(no_bf16 + "train -c " + config + " -m " + model + " --set training.precision=bf16", dir / "bf16");
  CHECK(bf16.exit_code == 2);
  CHECK(bf16.err.rfind("heed: error: training.precision is bf16, but this CPU has no bf16", 0) == 0);
  CHECK(std::count(bf16.err.begin(), bf16.err.end(), '\n') == 1);
  CHECK_FALSE(fs::exists(model));

  const Result chosen = run(no_bf16 + "train -c " + config + " -m " + model + " --set training.precision=auto", dir / "auto");
  INFO(chosen.err);
  CHECK(chosen.exit_code == 0);
  CHECK(chosen.err.find("training.precision auto: fp32 (this CPU has no bf16 dot products)") != std::string::npos);
  CHECK(chosen.err.find("products in bf16") == std::string::npos);

  const Result translate = run(no_bf16 + "translate -m " + model + " --precision bf16 -i " + dir / "train.src", dir / "t");
  CHECK(translate.exit_code == 2);
  CHECK(translate.err.find("decoding.precision (--precision) is bf16") != std::string::npos);
  CHECK(translate.out.empty());
}
