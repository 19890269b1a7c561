#include <spdlog/spdlog.h>

#include <cstdio>
#include <string>

#include "cli/registry.hpp"
#include "util/error.hpp"
#include "util/interrupt.hpp"
#include "util/log.hpp"
#include "util/threads.hpp"

namespace heed::cli {

bool Registry::run_parsed(CLI::App& app) const {
  CLI::App* node = &app;
  for (;;) {
    auto subs = node->get_subcommands();
    if (subs.empty()) break;
    node = subs.front();
  }
  auto it = runs_.find(node);
  if (it == runs_.end()) return false;
  it->second();
  return true;
}

namespace {
int fail(int code, const std::string& message) {
  std::fprintf(stderr, "heed: error: %s\n", message.c_str());
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
  if (node->get_require_subcommand_min() > 0 && node->get_subcommands().empty())
    return "missing subcommand" + see;
  return e.what() + see;
}
}  // namespace

int run(int argc, char** argv) {
  CLI::App app{"heed: train attention models (translation, graph attention networks), translate, predict, score with BLEU", "heed"};
  app.set_version_flag("--version", std::string("heed ") + HEED_VERSION);
  app.require_subcommand(1);
  app.fallthrough();
  std::string log_level = "info", log_file;
  bool quiet = false;
  int threads = 0;
  app.add_option("--log-level", log_level, "trace, debug, info, warn or error")->capture_default_str();
  app.add_flag("-q,--quiet", quiet, "log errors only");
  app.add_option("--log-file", log_file, "also append log lines to this file");
  app.add_option("--threads", threads, "threads for all math (default: all cores, or $HEED_THREADS)");

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
    std::printf("heed %s\n", HEED_VERSION);
    return 0;
  } catch (const CLI::ParseError& e) {
    // A subcommand's --help is also a ParseError subclass with exit code 0.
    if (e.get_exit_code() == 0) return app.exit(e);
    return fail(2, parse_error_message(app, e));
  }

  try {
    setup_logging(log_level, quiet, log_file);
    set_num_threads(threads);
    install_interrupt_handler();
    if (!registry.run_parsed(app)) return fail(2, "missing subcommand (see heed --help)");
    return 0;
  } catch (const Interrupted&) {
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

}  // namespace heed::cli
