#include "util/log.hpp"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <unistd.h>

#include "util/error.hpp"

namespace heed {
namespace {
bool g_quiet = false;
}

void setup_logging(const std::string& level, bool quiet, const std::string& log_file) {
  auto lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off")
    throw UsageError("--log-level: unknown level '" + level +
                     "' (allowed: trace, debug, info, warn, error)");
  if (quiet) lvl = spdlog::level::err;
  g_quiet = quiet;
  std::vector<spdlog::sink_ptr> sinks{std::make_shared<spdlog::sinks::stderr_sink_mt>()};
  if (!log_file.empty()) {
    try {
      sinks.push_back(std::make_shared<spdlog::sinks::basic_file_sink_mt>(log_file, false));
    } catch (const spdlog::spdlog_ex& e) {
      throw UsageError("--log-file: cannot open " + log_file);
    }
  }
  auto logger = std::make_shared<spdlog::logger>("heed", sinks.begin(), sinks.end());
  logger->set_pattern("[%Y-%m-%d %H:%M:%S] [%l] %v");
  logger->set_level(lvl);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

bool progress_on_terminal() { return !g_quiet && isatty(STDERR_FILENO); }

}  // namespace heed
