#include "cli/registry.hpp"

namespace heed::cli {

void add_config_command(CLI::App& app, Registry& registry);
void add_bleu_command(CLI::App& app, Registry& registry);
void add_tokenizer_command(CLI::App& app, Registry& registry);

void add_all_commands(CLI::App& app, Registry& registry) {
  add_config_command(app, registry);
  add_bleu_command(app, registry);
  add_tokenizer_command(app, registry);
}

}  // namespace heed::cli
