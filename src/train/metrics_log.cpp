#include "train/metrics_log.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "util/atomic_file.hpp"
#include "util/error.hpp"

namespace fs = std::filesystem;

namespace heed {
namespace {

void keep_records_up_to(const std::string& path, bool resume, int64_t step) {
  if (!fs::exists(path)) return;
  if (!resume) {
    fs::remove(path);
    return;
  }
  std::string kept;
  std::istringstream lines(read_file(path));
  for (std::string line; std::getline(lines, line);) {
    const auto record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (record.is_object() && record.value("step", int64_t{-1}) <= step) kept += line + '\n';
  }
  write_file_atomic(path, kept);
}

}  // namespace

MetricsLog::MetricsLog(const std::string& path, bool resume, int64_t step) {
  keep_records_up_to(path, resume, step);
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
