// `heed config show`: the effective config (defaults filled in, overrides applied), validated.
// `heed config schema`: the JSON Schema of config files (configs/schema.json is its output).
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>

#include "cli/output.hpp"
#include "cli/registry.hpp"
#include "config/config.hpp"

namespace heed::cli {

void add_config_command(CLI::App& app, Registry& registry) {
  auto* config = app.add_subcommand("config", "show the effective configuration or the config file schema");
  config->require_subcommand(1);

  struct ShowOptions {
    std::string config_path, model_dir;
    std::vector<std::string> overrides;
  };
  auto opts = std::make_shared<ShowOptions>();
  auto* show =
      config->add_subcommand("show", "print the effective config as JSON (defaults filled in, overrides applied)");
  auto* config_opt = show->add_option("-c,--config", opts->config_path, "config file (default: built-in defaults)");
  show->add_option("-m,--model", opts->model_dir, "show the config stored in this model directory")
      ->excludes(config_opt);
  show->add_option("--set", opts->overrides,
                   "override a field: KEY=VALUE, e.g. training.learning_rate=0.0005 (repeatable)")
      ->allow_extra_args(false);
  registry.on_run(show, [opts] {
    spdlog::debug(
        "effective config from {} with {} override(s)",
        opts->model_dir.empty() ? (opts->config_path.empty() ? "defaults" : opts->config_path) : opts->model_dir,
        opts->overrides.size());
    Config config = opts->model_dir.empty() ? load_config(opts->config_path, opts->overrides)
                                            : with_overrides(load_model_config(opts->model_dir), opts->overrides,
                                                             opts->model_dir + "/config.json");
    print(to_json(config).dump(2) + "\n");
  });

  auto* schema = config->add_subcommand("schema", "print the JSON Schema of config files (as in configs/schema.json)");
  registry.on_run(schema, [] { print(config_schema().dump(2) + "\n"); });
}

}  // namespace heed::cli
