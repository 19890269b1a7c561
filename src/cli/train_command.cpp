#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/config_flags.hpp"
#include "cli/registry.hpp"
#include "config/config.hpp"
#include "dist/process_group.hpp"
#include "train/graph_trainer.hpp"
#include "train/trainer.hpp"
#include "util/error.hpp"
#include "util/log.hpp"
#include "util/utf8.hpp"

namespace heed::cli {

void add_train_command(CLI::App& app, Registry& registry) {
  auto* cmd = app.add_subcommand(
      "train", "train a model: translation on parallel text, or a graph task (see configs/ for examples)");
  struct Args {
    std::string config, model_dir;
    std::vector<std::string> overrides;
    std::unique_ptr<ConfigFlags> training_flags;  // --resume (training.resume)
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("-c,--config", args->config, "JSON config file (with --resume: defaults to MODEL_DIR/config.json)");
  cmd->add_option("-m,--model-dir", args->model_dir,
                  "model directory to create or resume (else the config's model_dir)");
  cmd->add_option("--set", args->overrides, "override a config field: section.key=value (repeatable)");
  args->training_flags = std::make_unique<ConfigFlags>(*cmd, std::vector<std::string>{"training.resume"});
  registry.on_run(cmd, [args] {
    std::vector<std::string> overrides = args->training_flags->overrides();
    overrides.insert(overrides.end(), args->overrides.begin(), args->overrides.end());
    // --resume, or --set training.resume=true: the last word on it (a later --set overrides a flag).
    bool resume = false;
    for (const std::string& kv : overrides)
      if (kv.rfind("training.resume=", 0) == 0) resume = kv == "training.resume=true";
    Config config;
    if (!args->config.empty()) {
      config = load_config(args->config, overrides);
    } else if (resume && !args->model_dir.empty()) {
      config = with_overrides(load_model_config(args->model_dir), overrides, args->model_dir + "/config.json");
    } else {
      throw UsageError("train: give a config with -c (or --resume -m MODEL_DIR)");
    }
    if (!args->model_dir.empty()) {
      if (find_invalid_utf8(args->model_dir) != std::string::npos)
        throw UsageError("-m " + args->model_dir + ": the model directory's name is not UTF-8");
      config.model_dir = args->model_dir;
    }
    if (config.model_dir.empty()) throw UsageError("train: give a model directory with -m or model_dir in the config");
    dist::init();  // one of several processes when mpirun started this one
    if (dist::size() > 1) {
      log_as_rank(dist::rank());
      if (config.task != Task::translation)
        throw UsageError(
            "task " + std::string(name_of(config.task)) +
            ": data-parallel training (mpirun) is for translation models; graph tasks train in one process");
    }
    if (config.task == Task::translation) {
      train_model(config);
      return;
    }
    const GraphTrainSummary s = train_graph_model(config);
    std::printf("test %s %.2f %%, validation %s %.2f %%", s.score_name.c_str(), 100 * s.test.score,
                s.score_name.c_str(), 100 * s.validation.score);
    if (s.task == Task::link_prediction)
      std::printf("; test average precision %.2f %%, validation %.2f %%", 100 * s.test.average_precision,
                  100 * s.validation.average_precision);
    std::printf(" (kept epoch %lld of %lld, stopped by %s; %.2f ms per training epoch)\n",
                static_cast<long long>(s.best_epoch), static_cast<long long>(s.epochs), s.stop_reason.c_str(),
                s.train_ms_per_epoch);
  });
}

}  // namespace heed::cli
