#pragma once
// Logging: time-stamped lines on stderr (and optionally a file); results go to stdout.
#include <spdlog/spdlog.h>

#include <string>

namespace heed {

// level: trace, debug, info, warn, error. quiet: errors only. log_file: also append there.
// Throws UsageError for an unknown level or an unwritable log file.
void setup_logging(const std::string& level, bool quiet, const std::string& log_file);

// One of several data-parallel processes: ranks but 0 log warnings and errors only, each line
// naming the rank.
void log_as_rank(int rank);

// Flushes the log file and returns the first failure to write it ("cannot write the log file
// PATH: REASON"), empty when none. Logging goes on on stderr; the command reports it at its end
// (and exits 1).
std::string flush_log_file();

// True when stderr is a terminal (progress bars) and not quiet.
bool progress_on_terminal();

}  // namespace heed
