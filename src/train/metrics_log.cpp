#include "train/metrics_log.hpp"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "util/atomic_file.hpp"
#include "util/error.hpp"

namespace fs = std::filesystem;

namespace heed {
namespace {

void keep_records_up_to(const std::string& path, bool resume, const std::string& position_key, int64_t resume_at) {
  if (!fs::exists(path)) return;
  if (!resume) {
    fs::remove(path);
    return;
  }
  std::string kept;
  std::istringstream lines(read_file(path));
  for (std::string line; std::getline(lines, line);) {
    const auto record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!record.is_object()) continue;  // a line cut short by a kill
    // A record without a numeric position (one a user added) is kept, as one from before the resume.
    const auto position = record.find(position_key);
    if (position == record.end() || !position->is_number() || position->get<double>() <= resume_at) kept += line + '\n';
  }
  write_file_atomic(path, kept);
}

}  // namespace

MetricsLog::MetricsLog(const std::string& path, bool resume, const std::string& position_key, int64_t resume_at) {
  keep_records_up_to(path, resume, position_key, resume_at);
  out_.open(path, std::ios::app);
  if (!out_) throw Error("cannot write " + path + ": " + std::strerror(errno));
  path_ = path;
}

void MetricsLog::write(const nlohmann::json& record) {
  out_ << record.dump() << '\n';
  out_.flush();
  if (!out_) throw Error("cannot write " + path_ + ": " + std::strerror(errno));  // a full disk, say
}

}  // namespace heed
