#include "cli/registry.hpp"

namespace heed::cli {

void add_train_command(CLI::App& app, Registry& registry);
void add_translate_command(CLI::App& app, Registry& registry);
void add_score_command(CLI::App& app, Registry& registry);
void add_serve_command(CLI::App& app, Registry& registry);
void add_predict_command(CLI::App& app, Registry& registry);
void add_average_command(CLI::App& app, Registry& registry);
void add_plot_command(CLI::App& app, Registry& registry);
void add_quantize_command(CLI::App& app, Registry& registry);
void add_config_command(CLI::App& app, Registry& registry);
void add_bleu_command(CLI::App& app, Registry& registry);
void add_tokenizer_command(CLI::App& app, Registry& registry);
void add_bench_command(CLI::App& app, Registry& registry);

void add_all_commands(CLI::App& app, Registry& registry) {
  add_train_command(app, registry);
  add_translate_command(app, registry);
  add_score_command(app, registry);
  add_serve_command(app, registry);
  add_predict_command(app, registry);
  add_average_command(app, registry);
  add_plot_command(app, registry);
  add_quantize_command(app, registry);
  add_config_command(app, registry);
  add_bleu_command(app, registry);
  add_tokenizer_command(app, registry);
  add_bench_command(app, registry);
}

}  // namespace heed::cli
