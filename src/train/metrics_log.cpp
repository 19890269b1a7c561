#include "train/metrics_log.hpp"

#include <filesystem>
#include <sstream>

#include "util/atomic_file.hpp"
#include "util/error.hpp"

namespace heed {

MetricsFile::MetricsFile(const std::string& path, bool resume, const std::string& position_key, int64_t resume_at) {
  if (std::filesystem::exists(path)) {
    std::string kept;
    if (resume) {
      std::istringstream lines(read_file(path));
      for (std::string line; std::getline(lines, line);) {
        const auto record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
        if (record.is_object() && record.value(position_key, int64_t{-1}) <= resume_at) kept += line + '\n';
      }
    }
    write_file_atomic(path, kept);
  }
  out_.open(path, std::ios::app);
  if (!out_) throw Error("cannot write " + path);
}

void MetricsFile::write(const nlohmann::json& record) {
  out_ << record.dump() << '\n';
  out_.flush();
}

}  // namespace heed
