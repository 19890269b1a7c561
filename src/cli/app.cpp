#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "cli/registry.hpp"
#include "cli/validators.hpp"
#include "dist/process_group.hpp"
#include "util/error.hpp"
#include "util/interrupt.hpp"
#include "util/log.hpp"
#include "util/threads.hpp"
#include "util/utf8.hpp"

namespace heed::cli {

const Registry::Command* Registry::parsed(CLI::App& app) const {
  CLI::App* node = &app;
  for (;;) {
    auto subs = node->get_subcommands();
    if (subs.empty()) break;
    node = subs.front();
  }
  auto it = commands_.find(node);
  return it == commands_.end() ? nullptr : &it->second;
}

namespace {
// Messages can quote file contents (a damaged tokenizer.json): never raw bytes on the terminal.
int fail(int code, const std::string& message) {
  const std::string rank = dist::rank() > 0 ? "rank " + std::to_string(dist::rank()) + ": " : "";
  std::fprintf(stderr, "heed: error: %s%s\n", rank.c_str(), printable(message).c_str());
  return code;
}

std::string version_line() {
  const std::string mpi = dist::mpi_library_version();
  return std::string("heed ") + HEED_VERSION + (mpi.empty() ? " (built without MPI)" : " (MPI: " + mpi + ")");
}

// A closed standard descriptor (`heed ... >&-`) would be handed to the next file heed opens, and
// results meant for stdout would land in, say, a checkpoint. /dev/null, opened the wrong way
// round, takes its place: its reads and writes fail with EBADF, as the closed descriptor's would.
void occupy_closed_standard_descriptors() {
  for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int null = ::open("/dev/null", fd == STDIN_FILENO ? O_WRONLY : O_RDONLY);
    if (null >= 0 && null != fd) {
      ::dup2(null, fd);
      ::close(null);
    }
  }
}

// Results count only once they are out: a full disk or a closed stdout is a failure, not exit 0
// with the result lost.
int finish_stdout(int code) {
  if (code != 0) return code;
  if (std::fflush(stdout) != 0) return fail(1, std::string("cannot write to standard output: ") + std::strerror(errno));
  if (std::ferror(stdout)) return fail(1, "cannot write to standard output");
  return code;
}

CLI::App* deepest_parsed(CLI::App& app) {
  CLI::App* node = &app;
  while (!node->get_subcommands().empty()) node = node->get_subcommands().front();
  return node;
}

std::string command_path(const CLI::App* node) {
  std::string path;
  for (; node; node = node->get_parent()) path = node->get_name() + (path.empty() ? "" : " " + path);
  return path;
}

// CLI11 reports a stray word or flag as "A subcommand is required" or "... not expected";
// name the offending argument instead.
std::string parse_error_message(CLI::App& app, const CLI::ParseError& e) {
  CLI::App* node = deepest_parsed(app);
  std::string see = " (see " + command_path(node) + " --help)";
  std::vector<std::string> stray = app.remaining(true);
  if (!stray.empty()) {
    const std::string& arg = stray.front();
    if (arg.size() > 1 && arg[0] == '-') return "unknown option '" + arg.substr(0, arg.find('=')) + "'" + see;
    if (node->get_require_subcommand_min() > 0) return "unknown subcommand '" + arg + "'" + see;
    return "unexpected argument '" + arg + "'" + see;
  }
  if (node->get_require_subcommand_min() > 0 && node->get_subcommands().empty()) return "missing subcommand" + see;
  return e.what() + see;
}

// A failure that every data-parallel rank reached together (they leave the job together).
bool g_ranks_agree = false;

int run_command(int argc, char** argv) {
  CLI::App app{
      "heed: train attention models (translation, graph attention networks), translate, predict, score with BLEU",
      "heed"};
  app.set_version_flag("--version", version_line());
  app.require_subcommand(1);
  app.fallthrough();
  std::string log_level = "info", log_file;
  bool quiet = false;
  int threads = 0;
  app.add_option("--log-level", log_level, "trace, debug, info, warn or error")->capture_default_str();
  app.add_flag("-q,--quiet", quiet, "log errors only");
  app.add_option("--log-file", log_file, "also append log lines to this file");
  app.add_option("--threads", threads, "threads for all math (default: all cores, or $HEED_THREADS)")
      ->check(whole_number(1));

  Registry registry;
  add_all_commands(app, registry);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    std::fputs(app.help("", CLI::AppFormatMode::All).c_str(), stdout);
    return 0;
  } catch (const CLI::CallForVersion&) {
    std::printf("%s\n", version_line().c_str());
    return 0;
  } catch (const CLI::ParseError& e) {
    // A subcommand's --help is also a ParseError subclass with exit code 0.
    if (e.get_exit_code() == 0) return app.exit(e);
    return fail(2, parse_error_message(app, e));
  }

  try {
    install_interrupt_handler();  // before anything is logged: a caller that saw output can signal
    setup_logging(log_level, quiet, log_file);
    const Registry::Command* command = registry.parsed(app);
    if (!command) return fail(2, "missing subcommand (see heed --help)");
    set_num_threads(threads, command->threads);
    command->run();
    if (const std::string failure = flush_log_file(); !failure.empty()) return fail(1, failure);
    return 0;
  } catch (const Interrupted& e) {
    if (e.every_rank) {  // every rank stopped at the same update: rank 0 speaks for them
      g_ranks_agree = true;
      return dist::is_root() ? fail(1, "interrupted") : 1;
    }
    return fail(1, "interrupted");
  } catch (const UsageError& e) {
    return fail(2, e.what());
  } catch (const std::bad_alloc&) {
    return fail(1, "out of memory");
  } catch (const std::exception& e) {
    return fail(1, e.what());
  } catch (...) {
    return fail(1, "unknown failure");
  }
}

}  // namespace

int run(int argc, char** argv) {
  occupy_closed_standard_descriptors();
  const int code = finish_stdout(run_command(argc, argv));
  // Data-parallel: a rank that failed ends the whole job (the others may be waiting for it in a
  // collective); ranks that all succeeded leave it together.
  if (dist::size() > 1) {
    if (code != 0 && !g_ranks_agree) dist::abort(code);
    dist::finalize();
  }
  return code;
}

}  // namespace heed::cli
