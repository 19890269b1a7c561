#include <memory>

#include "cli/path_checks.hpp"
#include "cli/registry.hpp"
#include "train/average.hpp"

namespace heed::cli {

void add_average_command(CLI::App& app, Registry& registry) {
  auto* cmd = app.add_subcommand("average", "average the parameters of checkpoints of one model");
  struct Args {
    std::string output;
    std::vector<std::string> inputs;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("-o,--output", args->output, "averaged parameters (.safetensors)")->required();
  cmd->add_option("checkpoints", args->inputs, "checkpoint files (.safetensors)")->required();
  registry.on_run(cmd, [args] {
    refuse_output_over_input(args->output, args->inputs);
    write_safetensors(args->output, average_checkpoints(args->inputs));
  });
}

}  // namespace heed::cli
