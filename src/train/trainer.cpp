#include "train/trainer.hpp"

#include <spdlog/spdlog.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "data/batching.hpp"
#include "data/parallel_corpus.hpp"
#include "models/factory.hpp"
#include "tensor/ops.hpp"
#include "train/checkpoint.hpp"
#include "train/optimizer.hpp"
#include "train/progress.hpp"
#include "train/run_lock.hpp"
#include "train/schedule.hpp"
#include "train/trainer_state.hpp"
#include "train/update.hpp"
#include "train/validation.hpp"
#include "util/error.hpp"
#include "util/atomic_file.hpp"
#include "util/interrupt.hpp"

namespace fs = std::filesystem;

namespace heed {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

struct ModelDir {
  explicit ModelDir(std::string d) : dir(std::move(d)) {}
  std::string dir;
  std::string file(const std::string& name) const { return (fs::path(dir) / name).string(); }
  std::string checkpoint(int64_t step) const {
    char name[64];
    std::snprintf(name, sizeof name, "step-%08lld.safetensors", static_cast<long long>(step));
    return (fs::path(dir) / "checkpoints" / name).string();
  }
};

// The tokenizer: the one a resumed model directory holds, the configured file, or one learned
// from the training text (joint: both sides together).
Tokenizers prepare_tokenizers(const Config& config, const ModelDir& dir, bool resume) {
  if (resume) return Tokenizers::load(dir.file("tokenizer.json"));  // the one the model was trained with
  if (!config.tokenizer.path.empty()) return Tokenizers::load(config.tokenizer.path);
  TokenizerOptions options;
  options.vocab_size = config.tokenizer.vocab_size;
  options.character_coverage = config.tokenizer.character_coverage;
  options.split_by_script = config.tokenizer.split_by_script;
  options.max_piece_length = config.tokenizer.max_piece_length;
  const auto& src = config.data.train_src;
  const auto& tgt = config.data.train_tgt;
  spdlog::info("learning a {} tokenizer (vocabulary {}) from the training text",
               config.tokenizer.joint ? "joint" : "per-side", options.vocab_size);
  if (config.tokenizer.joint) {
    std::vector<std::string> files = src;
    files.insert(files.end(), tgt.begin(), tgt.end());
    return Tokenizers::joint(Tokenizer::train(files, options));
  }
  return Tokenizers::separate(Tokenizer::train(src, options), Tokenizer::train(tgt, options));
}

class MetricsLog {
 public:
  explicit MetricsLog(const std::string& path) : path_(path), out_(path, std::ios::app) {
    if (!out_) throw Error("cannot write " + path + ": " + std::strerror(errno));
  }
  void write(const nlohmann::json& record) {
    out_ << record.dump() << '\n';
    out_.flush();
    if (!out_) throw Error("cannot write " + path_ + ": " + std::strerror(errno));  // a full disk, say
  }

 private:
  std::string path_;
  std::ofstream out_;
};

// metrics.jsonl: a new run starts it afresh; a resumed one keeps the records up to the step it
// resumes at (those after it, from the lost end of a killed run, are about to be redone) and
// drops a line a kill cut short.
void prepare_metrics_log(const std::string& path, bool resume, int64_t step) {
  if (!fs::exists(path)) return;
  if (!resume) {
    fs::remove(path);
    return;
  }
  std::string kept;
  std::istringstream lines(read_file(path));
  for (std::string line; std::getline(lines, line);) {
    const auto record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (record.is_object() && record.value("step", int64_t{-1}) <= step) kept += line + '\n';
  }
  write_file_atomic(path, kept);
}

// Temporary files of atomic writes (NAME.tmp.PID) that a killed run left behind.
void remove_stale_temporaries(const std::vector<std::string>& dirs) {
  for (const auto& d : dirs)
    for (const auto& e : fs::directory_iterator(d))
      if (e.is_regular_file() && e.path().filename().string().find(".tmp.") != std::string::npos) fs::remove(e.path());
}

// A resumed run continues the trained model: its architecture and tokenizer settings must be
// those in config.json (training settings may change).
void check_resume_keeps_model(const std::string& dir, const Config& requested) {
  const FieldChange change = model_defining_change(load_model_config(dir), requested);
  if (!change.path.empty())
    throw UsageError("--resume cannot change " + change.path + " (" + change.trained.dump() + " in " +
                     (fs::path(dir) / "config.json").string() + ", now " + change.requested.dump() +
                     "): it defines the trained model; train into a new directory instead");
}

struct Window {  // training statistics since the last log line
  double loss_sum = 0, nll_sum = 0;
  int64_t labels = 0, steps = 0;
  Clock::time_point start = Clock::now();
};

}  // namespace

TrainSummary train_model(const TrainOptions& options) {
  const Config& config = options.config;
  const auto& tc = config.training;
  if (config.data.train_src.empty()) throw UsageError("data.train.src: no training files given");
  ModelDir dir(options.model_dir);
  const bool resume = options.resume || tc.resume;
  const RunLock lock(dir.dir);  // before anything else: a second run must not touch this one's files
  const std::string state_path = dir.file("trainer_state.safetensors");
  if (resume && !fs::exists(state_path))
    throw UsageError("--resume: " + dir.dir + " has no trainer_state.safetensors to resume from");
  if (!resume && fs::exists(state_path))
    throw UsageError(dir.dir + " already holds a training run; use --resume to continue it, or another directory");
  if (resume) check_resume_keeps_model(dir.dir, config);

  // Everything that can fail runs before the model directory changes: a refused or failing
  // start leaves a model that still translates and resumes. (Only the corpus cache may appear.)
  Tokenizers tokenizers = prepare_tokenizers(config, dir, resume);
  std::unique_ptr<Validator> validator;
  if (!config.data.dev_src.empty() || !config.data.dev_tgt.empty())
    validator = std::make_unique<Validator>(config, tokenizers);

  auto model = make_model(config.model, tokenizers.source().vocab_size(), tokenizers.target().vocab_size(), config.seed);
  const ParameterSet& params = model->parameters();
  spdlog::info("model {}: {} parameters", config.model.arch, params.count());
  Adam adam(params, {tc.beta1, tc.beta2, tc.eps, tc.weight_decay, tc.optimizer == "adamw"});
  TrainerProgress progress;
  if (resume) progress = load_trainer_state(state_path, params, adam);

  CorpusFilter filter{config.data.max_length, config.data.max_length_ratio};
  const std::string cache_dir = config.data.cache_dir.empty() ? dir.file("cache") : config.data.cache_dir;
  auto load_start = Clock::now();
  LoadedCorpus train = load_parallel_corpus(config.data.train_src, config.data.train_tgt, tokenizers, filter, cache_dir);
  spdlog::info("training data: {} pairs kept of {} ({} empty, {} too long, {} beyond the length ratio){}, {:.1f}s",
               train.stats.kept, train.stats.pairs_read, train.stats.skipped_empty, train.stats.skipped_too_long,
               train.stats.skipped_ratio, train.stats.from_cache ? " from cache" : "",
               seconds_between(load_start, Clock::now()));
  if (train.corpus.size() == 0) throw Error("no training pairs left after filtering");

  ScheduleOptions schedule{tc.schedule, tc.learning_rate, tc.warmup_steps, tc.min_learning_rate, tc.max_steps};
  BatchIterator batches(train.corpus, tc.batch_tokens, config.seed, parse_batch_unit(tc.batch_unit));
  if (resume) {
    model->rng().set_state(progress.rng_seed, progress.rng_counter);
    batches.seek(progress.epoch, progress.batch_index);
    spdlog::info("resumed at step {} (epoch {}, batch {})", progress.step, progress.epoch + 1, progress.batch_index);
  }

  fs::create_directories(dir.file("checkpoints"));
  remove_stale_temporaries({dir.dir, dir.file("checkpoints")});
  if (!resume) tokenizers.save(dir.file("tokenizer.json"));  // a resumed run keeps the one it has
  save_config(config, dir.file("config.json"));

  const bool higher_is_better = tc.validation_metric == "bleu";
  prepare_metrics_log(dir.file("metrics.jsonl"), resume, progress.step);
  MetricsLog metrics(dir.file("metrics.jsonl"));
  const auto session_start = Clock::now();
  auto elapsed = [&] { return progress.elapsed_seconds + seconds_between(session_start, Clock::now()); };

  auto save_checkpoint = [&] {
    TrainerProgress p = progress;
    p.epoch = batches.epoch();
    p.batch_index = batches.batch_index();
    p.rng_seed = model->rng().seed();
    p.rng_counter = model->rng().counter();
    p.elapsed_seconds = elapsed();
    save_trainer_state(state_path, params, adam, p);
    if (!validator) save_parameters(dir.file("model.safetensors"), params, {{"step", std::to_string(progress.step)}});
    save_parameters(dir.checkpoint(progress.step), params, {{"step", std::to_string(progress.step)}});
    std::vector<fs::path> old;
    for (const auto& e : fs::directory_iterator(dir.file("checkpoints")))
      if (e.path().extension() == ".safetensors") old.push_back(e.path());
    std::sort(old.begin(), old.end());
    for (size_t i = 0; i + tc.keep_last < old.size(); ++i) fs::remove(old[i]);
  };

  ProgressLine bar;
  auto log_line = [&](const std::string& text) {
    bar.clear();
    spdlog::info("{}", text);
  };

  bool stop_early = tc.patience > 0 && progress.validations_without_improvement >= tc.patience;
  auto run_validation = [&] {
    if (!validator) return;
    model->set_training(false);
    ValidationResult r = validator->run(*model);
    const double metric = higher_is_better ? r.bleu : r.loss;
    const bool improved = !progress.has_best || (higher_is_better ? metric > progress.best_metric : metric < progress.best_metric);
    if (improved) {
      progress.best_metric = metric;
      progress.has_best = true;
      progress.validations_without_improvement = 0;
      save_parameters(dir.file("model.safetensors"), params, {{"step", std::to_string(progress.step)}});
    } else {
      ++progress.validations_without_improvement;
    }
    log_line(fmt::format("validation at step {}: dev loss {:.4f}, ppl {:.2f}{}{}", progress.step, r.loss, r.ppl,
                         r.has_bleu ? fmt::format(", BLEU {:.2f}", r.bleu) : "", improved ? " (best so far)" : ""));
    nlohmann::json rec{{"type", "valid"}, {"step", progress.step}, {"loss", r.loss}, {"nll", r.nll}, {"ppl", r.ppl},
                       {"elapsed", elapsed()}, {"best", improved}};
    if (r.has_bleu) rec["bleu"] = r.bleu;
    metrics.write(rec);
    progress.validated_step = progress.step;
    if (tc.patience > 0 && progress.validations_without_improvement >= tc.patience) stop_early = true;
  };

  // A validation that fails (a dev line the model cannot take, no memory) must not lose the
  // training since the last checkpoint: it is saved first, and a resumed run validates again.
  auto validate_or_save = [&] {
    try {
      run_validation();
    } catch (const Interrupted&) {
      throw;  // saved below
    } catch (...) {
      bar.clear();
      save_checkpoint();
      spdlog::warn("validation failed: checkpoint saved at step {}; continue with --resume", progress.step);
      throw;
    }
  };

  Window window;
  double last_loss = 0;
  int bad_steps = 0;
  std::string stop_reason;
  try {
    // A validation that an interrupt cut short is run now, so the best model stays the same.
    if (resume && validator && progress.step % tc.validate_every == 0 && progress.validated_step != progress.step)
      validate_or_save();
    for (;;) {
      if (tc.max_steps > 0 && progress.step >= tc.max_steps) { stop_reason = "max_steps"; break; }
      if (tc.max_epochs > 0 && batches.epoch() >= tc.max_epochs) { stop_reason = "max_epochs"; break; }
      if (tc.max_time > 0 && elapsed() >= tc.max_time) { stop_reason = "max_time"; break; }
      if (stop_early) { stop_reason = "patience"; break; }
      throw_if_interrupted();

      std::vector<Batch> group;
      for (int k = 0; k < tc.accumulate; ++k) group.push_back(batches.next());
      model->set_training(true);
      const CrossEntropyStats stats = accumulate_gradients(*model, group, tc.label_smoothing);
      const float lr = learning_rate_at(progress.step + 1, schedule);
      if (!apply_update(params, adam, stats.loss_sum, tc.clip_norm, lr).applied) {
        ++bad_steps;
        bar.clear();
        spdlog::warn("step {}: non-finite loss or gradient, update skipped ({} in a row)", progress.step + 1, bad_steps);
        if (bad_steps >= tc.max_bad_steps)
          throw Error("training diverged: " + std::to_string(bad_steps) +
                      " consecutive updates with non-finite loss or gradients (training.max_bad_steps)");
        continue;
      }
      bad_steps = 0;
      ++progress.step;

      window.loss_sum += stats.loss_sum;
      window.nll_sum += stats.nll_sum;
      window.labels += stats.labels;
      ++window.steps;
      const double secs = seconds_between(window.start, Clock::now());
      const double loss = window.loss_sum / std::max<int64_t>(window.labels, 1);
      std::string eta;
      if (tc.max_steps > 0) eta = " ETA " + format_duration(elapsed() / progress.step * (tc.max_steps - progress.step));
      else if (tc.max_time > 0) eta = " ETA " + format_duration(std::max(0.0, tc.max_time - elapsed()));
      bar.update(fmt::format("epoch {} step {} loss {:.3f} {:.0f} tok/s lr {:.2e} {}{}", batches.epoch() + 1,
                             progress.step, loss, window.labels / std::max(secs, 1e-9), lr, format_duration(elapsed()), eta));
      if (progress.step % tc.log_every == 0) {
        const double nll = window.nll_sum / std::max<int64_t>(window.labels, 1);
        last_loss = loss;
        log_line(fmt::format("epoch {} step {}: loss {:.4f} nll {:.4f} ppl {:.2f}, {:.0f} target tokens/s, lr {:.3e}, {}",
                             batches.epoch() + 1, progress.step, loss, nll, std::exp(nll), window.labels / secs, lr,
                             format_duration(elapsed())));
        metrics.write({{"type", "train"}, {"step", progress.step}, {"epoch", batches.epoch() + 1}, {"loss", loss},
                       {"nll", nll}, {"ppl", std::exp(nll)}, {"tokens_per_s", window.labels / secs}, {"lr", lr},
                       {"elapsed", elapsed()}});
        window = Window();
      }
      if (progress.step % tc.validate_every == 0) {
        validate_or_save();
        save_checkpoint();
      }
    }
    if (validator ? progress.validated_step != progress.step : progress.step % tc.validate_every != 0) {
      validate_or_save();
      save_checkpoint();
    }
  } catch (const Interrupted&) {
    bar.clear();
    save_checkpoint();
    spdlog::warn("interrupted: checkpoint saved at step {}; continue with --resume", progress.step);
    throw;
  }
  bar.clear();
  if (window.labels > 0) last_loss = window.loss_sum / window.labels;
  spdlog::info("training stopped ({}) after {} steps, {}", stop_reason, progress.step, format_duration(elapsed()));
  return {progress.step, last_loss, progress.best_metric, stop_reason};
}

}  // namespace heed
