#pragma once
// metrics.jsonl: one JSON record a line (training windows, validations, epochs), appended and
// flushed as it happens.
#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <fstream>
#include <string>

namespace heed {

class MetricsLog {
 public:
  // A new run starts the file afresh; a resumed one keeps the records up to the position it
  // resumes at (those after it, from the lost end of a killed run, are about to be redone) and
  // drops a line a kill cut short. `position_key` is the field that orders the records ("step"
  // for translation, "epoch" for graph tasks).
  MetricsLog(const std::string& path, bool resume, const std::string& position_key, int64_t resume_at);
  void write(const nlohmann::json& record);

 private:
  std::string path_;
  std::ofstream out_;
};

}  // namespace heed
