#include <cstdio>
#include <memory>
#include <string>

#include "cli/output.hpp"
#include "cli/path_checks.hpp"
#include "cli/registry.hpp"
#include "train/graph_prediction.hpp"

namespace heed::cli {

void add_predict_command(CLI::App& app, Registry& registry) {
  auto* cmd = app.add_subcommand("predict", "write the class of every node with a node-classification model");
  struct Args {
    std::string model_dir, graph, output;
    bool probabilities = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("-m,--model-dir", args->model_dir, "model directory (heed train with task node-classification)")
      ->required();
  cmd->add_option("--graph", args->graph, "graph directory (default: the one the model was trained on)");
  cmd->add_option("-o,--output", args->output, "output file, one line per node (default: standard output)");
  cmd->add_flag("--probabilities", args->probabilities, "after the class, the probability of every class");
  registry.on_run(cmd, [args] {
    const NodePredictions p = predict_nodes(args->model_dir, args->graph);
    // Checked once the model and graph have loaded (their errors come first): the output must
    // replace none of the files read.
    std::vector<std::string> inputs = model_files(args->model_dir);
    for (const std::string& file : files_in(p.graph_dir)) inputs.push_back(file);
    refuse_output_over_input(args->output, inputs);
    Output out(args->output);
    std::string text;
    char number[32];
    for (int64_t i = 0; i < p.nodes; ++i) {
      text += std::to_string(p.predicted(i));
      if (args->probabilities)
        for (int64_t c = 0; c < p.classes; ++c) {
          std::snprintf(number, sizeof number, " %.6f", p.probabilities[i * p.classes + c]);
          text += number;
        }
      text += '\n';
      if (text.size() > (1 << 16)) {
        out.write(text);
        text.clear();
      }
    }
    out.write(text);
    out.finish();
  });
}

}  // namespace heed::cli
