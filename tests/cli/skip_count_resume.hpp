#pragma once
// A check the translation and the graph trainers' tests share: a run whose every update after
// the first is skipped (non-finite), ended by its time budget in mid-streak, saved its count of
// updates skipped in a row, and a resume counts on from it to training.max_bad_steps.
#include <catch2/catch.hpp>

#include <string>

#include "io/safetensors.hpp"
#include "train_fixture.hpp"

namespace heed::test {

// `first`: the run that wrote `model_dir`; `resume`: the command line that resumes it, to which a
// max_bad_steps two above the saved count is added (run with `scratch` for its logs).
inline void check_skip_count_resumes(const Result& first, const std::string& model_dir, const std::string& resume,
                                     const std::string& scratch) {
  const auto meta = read_safetensors(model_dir + "/trainer_state.safetensors").metadata;
  const int64_t skipped = std::stoll(meta.at("skipped_in_a_row"));
  REQUIRE(skipped >= 1);
  CHECK(first.err.find("update skipped (" + std::to_string(skipped) + " in a row)") != std::string::npos);
  CHECK(first.err.find("update skipped (" + std::to_string(skipped + 1) + " in a row)") == std::string::npos);

  // Two more skipped updates reach the limit: the count goes on from the saved one.
  const Result resumed = run(resume + " --set training.max_bad_steps=" + std::to_string(skipped + 2), scratch);
  INFO(resumed.err);
  CHECK(resumed.exit_code == 1);
  CHECK(resumed.err.find("update skipped (" + std::to_string(skipped + 1) + " in a row)") != std::string::npos);
  CHECK(resumed.err.find("update skipped (1 in a row)") == std::string::npos);
  CHECK(resumed.err.find("heed: error: training diverged: " + std::to_string(skipped + 2) + " consecutive") !=
        std::string::npos);
}

}  // namespace heed::test
