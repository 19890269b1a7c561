#include "util/log.hpp"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "util/error.hpp"

namespace heed {
namespace {
bool g_quiet = false;
std::string g_log_file_failure;

// Appends to the log file and records (instead of printing spdlog's own complaint) the first
// write that fails, e.g. on a full disk; it writes nothing more after that.
class LogFileSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit LogFileSink(const std::string& path) : path_(path), file_(std::fopen(path.c_str(), "ab")) {
    if (!file_) throw UsageError("--log-file: cannot open " + path);
  }
  ~LogFileSink() override { std::fclose(file_); }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t line;
    formatter_->format(msg, line);
    if (g_log_file_failure.empty() && std::fwrite(line.data(), 1, line.size(), file_) != line.size()) failed();
  }
  void flush_() override {
    if (g_log_file_failure.empty() && std::fflush(file_) != 0) failed();
  }

 private:
  void failed() { g_log_file_failure = "cannot write the log file " + path_ + ": " + std::strerror(errno); }

  std::string path_;
  std::FILE* file_;
};
}  // namespace

void setup_logging(const std::string& level, bool quiet, const std::string& log_file) {
  auto lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off")
    throw UsageError("--log-level: unknown level '" + level + "' (allowed: trace, debug, info, warn, error)");
  if (quiet) lvl = spdlog::level::err;
  g_quiet = quiet;
  std::vector<spdlog::sink_ptr> sinks{std::make_shared<spdlog::sinks::stderr_sink_mt>()};
  if (!log_file.empty()) sinks.push_back(std::make_shared<LogFileSink>(log_file));
  auto logger = std::make_shared<spdlog::logger>("heed", sinks.begin(), sinks.end());
  logger->set_pattern("[%Y-%m-%d %H:%M:%S] [%l] %v");
  logger->set_level(lvl);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

void log_as_rank(int rank) {
  if (rank == 0) return;
  auto logger = spdlog::default_logger();
  logger->set_pattern("[%Y-%m-%d %H:%M:%S] [%l] rank " + std::to_string(rank) + ": %v");
  if (logger->level() < spdlog::level::warn) logger->set_level(spdlog::level::warn);
}

std::string flush_log_file() {
  spdlog::default_logger()->flush();
  return g_log_file_failure;
}

bool progress_on_terminal() { return !g_quiet && isatty(STDERR_FILENO); }

}  // namespace heed
