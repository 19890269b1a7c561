#include "train/graph_trainer.hpp"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <vector>

#include "train/checkpoint.hpp"
#include "train/metrics_log.hpp"
#include "train/model_dir.hpp"
#include "train/optimizer.hpp"
#include "train/precision_setup.hpp"
#include "train/progress.hpp"
#include "train/run_lock.hpp"
#include "train/schedule.hpp"
#include "train/trainer_state.hpp"
#include "train/update.hpp"
#include "util/error.hpp"
#include "util/interrupt.hpp"

namespace fs = std::filesystem;

namespace heed {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// The reference's early stopping: the best validation score and loss so far, the epochs since
// either improved, and the parameters of the last epoch at which both did.
struct EarlyStopping {
  double max_score = -std::numeric_limits<double>::infinity();
  double min_loss = std::numeric_limits<double>::infinity();
  int64_t wait = 0;
  int64_t best_epoch = 0;
  GraphScores best;
  std::vector<Tensor> best_parameters;

  // Returns true when the parameters were kept.
  bool update(const GraphScores& val, int64_t epoch, const ParameterSet& params) {
    const bool score_ok = val.score >= max_score, loss_ok = val.loss <= min_loss;
    if (!score_ok && !loss_ok) {
      ++wait;
      return false;
    }
    const bool keep = score_ok && loss_ok;
    if (keep) {
      best_parameters.clear();
      for (const auto& [name, var] : params.all()) best_parameters.push_back(var.value().clone());
      best_epoch = epoch;
      best = val;
    }
    max_score = std::max(max_score, val.score);
    min_loss = std::min(min_loss, val.loss);
    wait = 0;
    return keep;
  }

  void save_to(TrainerProgress& p) const {
    p.has_best = !best_parameters.empty();
    p.best_metric = best.score;
    p.validations_without_improvement = wait;
    p.task_state = {{"max_val_score", exact_number(max_score)},
                    {"min_val_loss", exact_number(min_loss)},
                    {"best_epoch", std::to_string(best_epoch)},
                    {"best_val_loss", exact_number(best.loss)},
                    {"best_val_ap", exact_number(best.average_precision)}};
  }
  void load_from(const TrainerProgress& p, const std::string& path) {
    wait = p.validations_without_improvement;
    best.score = p.best_metric;
    max_score = task_number(p, "max_val_score", path);
    min_loss = task_number(p, "min_val_loss", path);
    best_epoch = static_cast<int64_t>(task_number(p, "best_epoch", path));
    best.loss = task_number(p, "best_val_loss", path);
    best.average_precision = task_number(p, "best_val_ap", path);
  }
};

// The median step time, leaving out the first 5 (primitives are created, memory first touched)
// when there are more.
double median_step_ms(const std::vector<double>& all) {
  if (all.empty()) return 0;
  std::vector<double> v(all.begin() + (all.size() > 5 ? 5 : 0), all.end());
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// Scores of a split as metrics.jsonl fields, e.g. val_loss, val_accuracy (val_ap for links).
void put_scores(nlohmann::json& record, const std::string& prefix, const std::string& score_name, const GraphScores& s,
                bool links) {
  record[prefix + "_loss"] = s.loss;
  record[prefix + "_" + score_name] = s.score;
  if (links) record[prefix + "_ap"] = s.average_precision;
}

}  // namespace

GraphTrainSummary train_graph_model(const Config& config) {
  const auto& tc = config.training;
  const std::string task_name(name_of(config.task));
  if (tc.patience == 0 && tc.max_epochs == 0 && tc.max_steps == 0 && tc.max_time == 0)
    throw UsageError("task " + task_name + ": set training.patience, max_epochs or max_time, or training never stops");
  PrecisionSetup precision(tc);         // a bf16 run on a CPU without bf16 stops here, touching nothing
  const RunLock lock(config.model_dir);  // one run per directory, before anything is read or written
  const ModelDir model_dir = check_run_directory(config);
  const std::string dir = model_dir.path();
  const bool resume = tc.resume;
  const std::string state_path = model_dir.file("trainer_state.safetensors");

  auto task = make_graph_task(config);  // reads the graph before anything is written
  spdlog::info("{}: {}", task_name, task->describe());
  Gat model(config.model, task->inputs(), task->outputs(), config.seed);
  const ParameterSet& params = model.parameters();
  precision.attach(params);
  spdlog::info("model gat: {} parameters{}", params.count(),
               precision.precision() == MatmulPrecision::bf16 ? ", products in bf16" : "");

  Adam adam(params, tc);
  const int64_t epoch_limit = tc.max_epochs > 0 && tc.max_steps > 0 ? std::min(tc.max_epochs, tc.max_steps)
                                                                    : std::max(tc.max_epochs, tc.max_steps);
  TrainingConfig schedule = tc;  // one update per epoch: the schedule's horizon is the epoch limit
  schedule.max_steps = epoch_limit;
  EarlyStopping stopping;
  int64_t epoch = 0;
  int64_t skipped_in_a_row = 0;  // updates skipped since the last applied one (training.max_bad_steps)
  double elapsed_before = 0;
  if (resume) {
    TrainerProgress p = load_trainer_state(state_path, params, adam, &stopping.best_parameters);
    epoch = p.epoch;
    skipped_in_a_row = p.skipped_in_a_row;
    elapsed_before = p.elapsed_seconds;
    model.rng().set_state(p.rng_seed, p.rng_counter);
    stopping.load_from(p, state_path);
    spdlog::info("resumed at epoch {}", epoch);
  }
  // Written once the trainer state has loaded into this config's model: a resume that fails its
  // checks (another graph's feature count) leaves the directory as it was.
  fs::create_directories(dir);
  save_config(config, (fs::path(dir) / "config.json").string());
  MetricsLog metrics((fs::path(dir) / "metrics.jsonl").string(), resume, "epoch", epoch);
  const auto session_start = Clock::now();
  auto elapsed = [&] { return elapsed_before + seconds_since(session_start); };
  const bool links = config.task == Task::link_prediction;
  const std::string score = task->score_name();

  auto save_state = [&] {
    TrainerProgress p;
    p.step = p.epoch = p.validated_step = epoch;
    p.rng_seed = model.rng().seed();
    p.rng_counter = model.rng().counter();
    p.elapsed_seconds = elapsed();
    p.skipped_in_a_row = skipped_in_a_row;
    stopping.save_to(p);
    save_trainer_state(state_path, params, adam, p, &stopping.best_parameters);
  };

  ProgressLine bar;
  std::vector<double> step_ms;
  std::string stop_reason;
  try {
    for (;;) {
      if (epoch_limit > 0 && epoch >= epoch_limit) {
        stop_reason = tc.max_epochs == epoch_limit ? "max_epochs" : "max_steps";
        break;
      }
      if (tc.max_time > 0 && elapsed() >= tc.max_time) {
        stop_reason = "max_time";
        break;
      }
      if (tc.patience > 0 && stopping.wait >= tc.patience) {
        stop_reason = "patience";
        break;
      }
      throw_if_interrupted();

      const auto step_start = Clock::now();
      Var loss = task->training_loss(model);
      const double loss_value = loss.value().item();
      backward(loss);
      const float lr = learning_rate_at(epoch + 1, elapsed(), schedule);
      if (!apply_update(params, adam, loss_value, tc.clip_norm, lr).applied) {
        bar.clear();
        count_skipped_update(skipped_in_a_row, tc.max_bad_steps, "epoch " + std::to_string(epoch + 1));
        continue;
      }
      skipped_in_a_row = 0;
      ++epoch;
      step_ms.push_back(1e3 * seconds_since(step_start));

      const GraphScores val = task->evaluate(model, GraphSplit::Validation);
      const bool kept = stopping.update(val, epoch, params);
      nlohmann::json record{{"type", "epoch"}, {"epoch", epoch}, {"loss", loss_value},
                            {"lr", lr},        {"best", kept},   {"elapsed", elapsed()}};
      put_scores(record, "val", score, val, links);
      metrics.write(record);
      bar.update(fmt::format("epoch {} loss {:.4f} val loss {:.4f} val {} {:.4f} (best {:.4f} at epoch {}) {}", epoch,
                             loss_value, val.loss, score, val.score, stopping.best.score, stopping.best_epoch,
                             format_duration(elapsed())));
      if (epoch % tc.log_every == 0) {
        bar.clear();
        spdlog::info(
            "epoch {}: loss {:.4f}, val loss {:.4f}, val {} {:.4f} (kept epoch {}: {:.4f}), {:.2f} ms/epoch, {}", epoch,
            loss_value, val.loss, score, val.score, stopping.best_epoch, stopping.best.score, median_step_ms(step_ms),
            format_duration(elapsed()));
      }
      if (epoch % tc.validate_every == 0) save_state();
    }
  } catch (const Interrupted&) {
    bar.clear();
    save_state();
    spdlog::warn("interrupted: trainer state saved at epoch {}; continue with --resume", epoch);
    throw;
  }
  bar.clear();
  save_state();  // the last parameters: --resume with a larger limit continues from them

  GraphTrainSummary summary;
  summary.task = config.task;
  summary.score_name = score;
  summary.epochs = epoch;
  summary.best_epoch = stopping.best_epoch;
  summary.stop_reason = stop_reason;
  summary.train_ms_per_epoch = median_step_ms(step_ms);
  if (stopping.best_parameters.empty())
    throw Error("training kept no parameters (no epoch had a finite validation loss)");
  for (size_t i = 0; i < params.all().size(); ++i)
    params.all()[i].second.value().copy_from(stopping.best_parameters[i]);
  refresh_bf16_weight_copies();
  summary.validation = task->evaluate(model, GraphSplit::Validation);
  summary.test = task->evaluate(model, GraphSplit::Test);
  save_parameters((fs::path(dir) / "model.safetensors").string(), params,
                  {{"task", task_name},
                   {"inputs", std::to_string(task->inputs())},
                   {"outputs", std::to_string(task->outputs())},
                   {"epoch", std::to_string(stopping.best_epoch)}});
  nlohmann::json record{{"type", "test"},
                        {"epoch", epoch},
                        {"best_epoch", stopping.best_epoch},
                        {"stop_reason", stop_reason},
                        {"train_ms_per_epoch", summary.train_ms_per_epoch}};
  put_scores(record, "val", score, summary.validation, links);
  put_scores(record, "test", score, summary.test, links);
  metrics.write(record);
  spdlog::info("training stopped ({}) after {} epochs, {}; restored epoch {}: val {} {:.4f}, test {} {:.4f}",
               stop_reason, epoch, format_duration(elapsed()), stopping.best_epoch, score, summary.validation.score,
               score, summary.test.score);
  return summary;
}

}  // namespace heed
