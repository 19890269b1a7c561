#pragma once
// Subcommands register here: each `add_*_command` creates its CLI11 subcommand and the function
// that runs it. The run functions are called after parsing, once global flags (logging,
// threads) are in effect.
#include <CLI/CLI.hpp>

#include <functional>
#include <map>

#include "util/threads.hpp"

namespace heed::cli {

class Registry {
 public:
  struct Command {
    std::function<void()> run;
    ThreadUse threads = ThreadUse::shared_products;  // how its threads work: the default count
  };
  void on_run(CLI::App* command, std::function<void()> run, ThreadUse threads = ThreadUse::shared_products) {
    commands_[command] = {std::move(run), threads};
  }
  // The deepest parsed subcommand; nullptr when it has no run function.
  const Command* parsed(CLI::App& app) const;

 private:
  std::map<const CLI::App*, Command> commands_;
};

// One line per subcommand, in the order `heed --help` lists them (cli/commands.cpp).
void add_all_commands(CLI::App& app, Registry& registry);

// Exit codes: 0 success, 2 usage or configuration error, 1 any other failure.
int run(int argc, char** argv);

}  // namespace heed::cli
