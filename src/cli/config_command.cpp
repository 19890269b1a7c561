#include <cstdio>

#include "cli/registry.hpp"

namespace heed::cli {

void add_config_command(CLI::App& app, Registry& registry) {
  auto* config = app.add_subcommand("config", "inspect configuration files");
  config->require_subcommand(1);
  auto* show = config->add_subcommand("show", "print the effective config (defaults filled in)");
  auto* path = new std::string;  // lives as long as the app
  show->add_option("-c,--config", *path, "config file")->required();
  registry.on_run(show, [path] { std::printf("TODO %s\n", path->c_str()); });
}

}  // namespace heed::cli
