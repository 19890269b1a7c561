// heed plot RUN [RUN ...] -o curves.svg: the learning curves of translation runs in one picture.
#include <memory>

#include "cli/path_checks.hpp"
#include "cli/registry.hpp"
#include "train/learning_curves.hpp"
#include "train/model_dir.hpp"
#include "util/atomic_file.hpp"

namespace heed::cli {

void add_plot_command(CLI::App& app, Registry& registry) {
  auto* cmd = app.add_subcommand(
      "plot", "draw dev BLEU and loss against updates and wall time for training runs (SVG)");
  struct Args {
    std::string output;
    std::vector<std::string> runs;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("-o,--output", args->output, "the picture (.svg)")->required();
  cmd->add_option("runs", args->runs, "model directories of translation runs (their metrics.jsonl)")->required();
  registry.on_run(cmd, [args] {
    std::vector<std::string> inputs;
    for (const std::string& dir : args->runs) inputs.push_back(ModelDir(dir).file("metrics.jsonl"));
    refuse_output_over_input(args->output, inputs);
    std::vector<RunCurves> runs;
    for (const std::string& dir : args->runs)
      runs.push_back(read_run_curves(ModelDir(dir).file("metrics.jsonl"), run_name(dir)));
    write_file_atomic(args->output, learning_curves_svg(runs));
  });
}

}  // namespace heed::cli
