#pragma once
// <model_dir>/metrics.jsonl: one JSON object per line, appended and flushed as training goes. A
// new run starts the file afresh; a resumed one keeps the records up to the position it resumes
// at (those after it, from the lost end of a killed run, are about to be redone) and drops a
// line a kill cut short.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <fstream>
#include <string>

namespace heed {

class MetricsFile {
 public:
  // `position_key`: the field that orders the records ("step", "epoch"); with resume, records
  // whose position exceeds `resume_at` (or that do not parse) are dropped first.
  MetricsFile(const std::string& path, bool resume, const std::string& position_key, int64_t resume_at);
  void write(const nlohmann::json& record);

 private:
  std::ofstream out_;
};

}  // namespace heed
