#include "train/trainer.hpp"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>

#include "dist/process_group.hpp"
#include "io/safetensors.hpp"
#include "models/factory.hpp"
#include "tensor/ops.hpp"
#include "train/average.hpp"
#include "train/checkpoint.hpp"
#include "train/learning_curves.hpp"
#include "train/memory_check.hpp"
#include "train/schedule.hpp"
#include "train/update.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/interrupt.hpp"

namespace fs = std::filesystem;

namespace heed {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

bool resuming(const Config& config) { return config.training.resume; }

// Checks that the directory fits the run: a fresh one, or one to resume whose config.json
// defines the same model (training settings may change). Changes nothing.
ModelDir check_model_dir(const Config& config) {
  if (config.data.train_src.empty()) throw UsageError("data.train.src: no training files given");
  if (!dist::is_root()) return ModelDir(config.model_dir);  // rank 0 checks it, and writes it
  return check_run_directory(config);
}

std::unique_ptr<RunLock> lock_model_dir(const Config& config) {
  return dist::is_root() ? std::make_unique<RunLock>(config.model_dir) : nullptr;
}

// The tokenizer: the one a resumed model directory holds, the configured file, or one learned
// from the training text (joint: both sides together).
Tokenizers prepare_tokenizers(const Config& config, const ModelDir& dir);

// Data-parallel: rank 0 prepares the tokenizer, the others receive it (a learned one exists
// nowhere else yet).
Tokenizers shared_tokenizers(const Config& config, const ModelDir& dir) {
  if (dist::size() == 1) return prepare_tokenizers(config, dir);
  const std::string text =
      dist::broadcast(dist::is_root() ? prepare_tokenizers(config, dir).to_json().dump() : std::string());
  return Tokenizers::parse(text, "rank 0's tokenizer");
}

Tokenizers prepare_tokenizers(const Config& config, const ModelDir& dir) {
  if (resuming(config)) return Tokenizers::load(dir.file("tokenizer.json"));  // the one the model was trained with
  if (!config.tokenizer.path.empty()) return Tokenizers::load(config.tokenizer.path);
  TokenizerOptions options;
  options.vocab_size = config.tokenizer.vocab_size;
  options.character_coverage = config.tokenizer.character_coverage;
  options.split_by_script = config.tokenizer.split_by_script;
  options.max_piece_length = config.tokenizer.max_piece_length;
  const auto& src = config.data.train_src;
  const auto& tgt = config.data.train_tgt;
  // Learning takes minutes: files that do not pair up must not wait for it (the dev pair either).
  check_parallel_files(src, tgt);
  if (!config.data.dev_src.empty()) check_parallel_files({config.data.dev_src}, {config.data.dev_tgt});
  spdlog::info("learning a {} tokenizer (vocabulary {}) from the training text",
               config.tokenizer.joint ? "joint" : "per-side", options.vocab_size);
  if (config.tokenizer.joint) {
    std::vector<std::string> files = src;
    files.insert(files.end(), tgt.begin(), tgt.end());
    return Tokenizers::joint(Tokenizer::train(files, options));
  }
  return Tokenizers::separate(Tokenizer::train(src, options), Tokenizer::train(tgt, options));
}

// The run's files, written once every check has passed (a refused or failing start leaves a
// model that still translates and resumes): checkpoints/, config.json, and tokenizer.json for a
// new run (a resumed one keeps its own). Temporaries a killed run left behind go, also from the
// default corpus cache in the directory (the run lock makes them a dead run's; a cache_dir
// elsewhere may be shared by runs that are alive).
void write_run_files(const Config& config, const ModelDir& dir, const Tokenizers& tokenizers) {
  fs::create_directories(dir.checkpoints());
  remove_stale_temporaries(dir.path());
  remove_stale_temporaries(dir.checkpoints());
  if (config.data.cache_dir.empty() && fs::is_directory(dir.file("cache"))) remove_stale_temporaries(dir.file("cache"));
  if (!resuming(config)) tokenizers.save(dir.file("tokenizer.json"));
  save_config(config, dir.file("config.json"));
}

LoadedCorpus load_training_corpus(const Config& config, const ModelDir& dir, const Tokenizers& tokenizers) {
  // Rank 0 first: it writes the encoded cache, which the others then read.
  if (!dist::is_root()) dist::barrier();
  const auto start = std::chrono::steady_clock::now();
  const CorpusFilter filter{config.data.max_length, config.data.max_length_ratio};
  const std::string cache_dir = config.data.cache_dir.empty() ? dir.file("cache") : config.data.cache_dir;
  LoadedCorpus train =
      load_parallel_corpus(config.data.train_src, config.data.train_tgt, tokenizers, filter, cache_dir);
  spdlog::info("training data: {} pairs kept of {} ({} empty, {} too long, {} beyond the length ratio){}, {:.1f}s",
               train.stats.kept, train.stats.pairs_read, train.stats.skipped_empty, train.stats.skipped_too_long,
               train.stats.skipped_ratio, train.stats.from_cache ? " from cache" : "", seconds_since(start));
  if (dist::is_root()) dist::barrier();
  if (train.corpus.size() == 0) throw Error("no training pairs left after filtering");
  return train;
}

std::unique_ptr<Validator> make_validator(const Config& config, const Tokenizers& tokenizers) {
  if (config.data.dev_src.empty() && config.data.dev_tgt.empty()) return nullptr;
  return std::make_unique<Validator>(config, tokenizers);
}

std::unique_ptr<Seq2Seq> make_trainable_model(const Config& config, const Tokenizers& tokenizers) {
  const int src_vocab = tokenizers.source().vocab_size(), tgt_vocab = tokenizers.target().vocab_size();
  check_trainable(static_cast<double>(model_parameter_count(config.model, src_vocab, tgt_vocab)),
                  "model." + std::string(name_of(config.model.arch)) + " with vocabularies of " +
                      std::to_string(src_vocab) + " and " + std::to_string(tgt_vocab) + " tokens");
  return make_model(config.model, src_vocab, tgt_vocab, config.seed);
}

}  // namespace

Trainer::Trainer(const Config& config)
    : config_(config),
      precision_(tc_),
      lock_(lock_model_dir(config_)),  // before anything else: a second run must not touch this one's files
      dir_(check_model_dir(config_)),
      resume_(resuming(config_)),
      tokenizers_(shared_tokenizers(config_, dir_)),
      validator_(make_validator(config_, tokenizers_)),
      model_(make_trainable_model(config_, tokenizers_)),
      adam_(model_->parameters(), tc_),
      sync_(model_->parameters(), tc_.reduce_bucket_mb, tc_.reduce_overlap),
      progress_(resume_ ? load_trainer_state(dir_.file("trainer_state.safetensors"), model_->parameters(), adam_)
                        : TrainerProgress{}),
      train_(load_training_corpus(config_, dir_, tokenizers_)),  // only the corpus cache may appear before this
      batches_(train_.corpus, tc_.batch_tokens, config_.seed, tc_.batch_unit) {
  precision_.attach(model_->parameters());
  spdlog::info("model {}: {} parameters{}", name_of(config_.model.arch), model_->parameters().count(),
               precision_.precision() == MatmulPrecision::bf16 ? ", products in bf16" : "");
  if (dist::size() > 1)
    spdlog::info("data-parallel: {} processes, {} batches per update, gradients in {} all-reduce buckets{}",
                 dist::size(), dist::size() * tc_.accumulate, sync_.bucket_count(),
                 tc_.reduce_overlap ? " started during backward" : "");
  if (resume_) {
    model_->rng().set_state(progress_.rng_seed, progress_.rng_counter);
    batches_.seek(progress_.epoch, progress_.batch_index);
    spdlog::info("resumed at step {} (epoch {}, batch {})", progress_.step, progress_.epoch + 1, progress_.batch_index);
  }
  if (dist::is_root()) {
    write_run_files(config_, dir_, tokenizers_);
    if (resume_) write_step_files(progress_.step_checkpoint);  // a kill may have come before them
    metrics_.emplace(dir_.file("metrics.jsonl"), resume_, "step", progress_.step);
  }
  stop_early_ = tc_.patience > 0 && progress_.validations_without_improvement >= tc_.patience;
  synced_elapsed_ = progress_.elapsed_seconds;  // a resumed budget's clock, until the first update
}

double Trainer::elapsed() const { return progress_.elapsed_seconds + seconds_since(session_start_); }

double Trainer::budget_elapsed() const { return dist::size() > 1 ? synced_elapsed_ : elapsed(); }

void Trainer::log(const std::string& text) {
  bar_.clear();
  spdlog::info("{}", text);
}

void Trainer::save_checkpoint(bool snapshot) {
  if (!dist::is_root()) return;
  TrainerProgress p = progress_;
  p.epoch = batches_.epoch();
  p.batch_index = batches_.batch_index();
  p.rng_seed = model_->rng().seed();
  p.rng_counter = model_->rng().counter();
  p.elapsed_seconds = elapsed();
  p.step_checkpoint = snapshot;
  // The trainer state first: it is the record that the step is done, and it holds the parameters
  // that the step's other files copy. A kill before it leaves the last state, whose files are all
  // written (or, in a run's first checkpoint, no state and no files: a fresh run may start); a
  // kill after it leaves those files to the resumed run, which writes them again from the state.
  save_trainer_state(dir_.file("trainer_state.safetensors"), model_->parameters(), adam_, p);
  write_step_files(snapshot);
}

void Trainer::write_step_files(bool snapshot) {
  const ParameterSet& params = model_->parameters();
  const std::string step = std::to_string(progress_.step);
  if (snapshot) save_parameters(dir_.checkpoint(progress_.step), params, {{"step", step}});
  if (!validator_) save_parameters(dir_.file("model.safetensors"), params, {{"step", step}});
  if (!snapshot) return;
  const std::vector<std::string> old = dir_.checkpoint_files();
  for (size_t i = 0; i + tc_.keep_last < old.size(); ++i) fs::remove(old[i]);
}

double Trainer::validation_metric(const ValidationResult& r) const {
  return tc_.validation_metric == ValidationMetric::bleu ? r.bleu : r.loss;
}

bool Trainer::beats_best(double metric) const {
  return improves_on(metric, progress_.has_best ? std::optional<double>(progress_.best_metric) : std::nullopt,
                     tc_.validation_metric);
}

ValidationResult Trainer::run_validator() {
  if (dist::size() == 1) return validator_->run(*model_);
  // Data-parallel: each rank's shard ends in all-reduces, so a rank must not leave it on an
  // interrupt the others have not seen. The ranks finish it, then share what they saw: they stop
  // together, at the loop's next check or right after a validation that ends the run.
  ValidationResult r;
  {
    const InterruptsDeferred together;
    r = validator_->run(*model_);
  }
  double seen = interrupted() ? 1.0 : 0.0;
  dist::all_reduce_sum(&seen, 1);
  interrupt_seen_ = interrupt_seen_ || seen > 0;
  return r;
}

void Trainer::validate() {
  if (!validator_) return;
  // A run's first model.safetensors (written by its first validation) comes after its first
  // trainer state (this step's, the validation not done: a resumed run does it again), so that a
  // directory with a model but no state is one whose state was removed: a new run refuses it.
  if (dist::is_root() && !fs::exists(dir_.file("trainer_state.safetensors"))) save_checkpoint(/*snapshot=*/false);
  model_->set_training(false);
  const ValidationResult r = run_validator();
  const double metric = validation_metric(r);
  const bool improved = beats_best(metric);
  if (improved) {
    progress_.best_metric = metric;
    progress_.has_best = true;
    progress_.validations_without_improvement = 0;
    if (dist::is_root())
      save_parameters(dir_.file("model.safetensors"), model_->parameters(), {{"step", std::to_string(progress_.step)}});
  } else {
    ++progress_.validations_without_improvement;
  }
  log(fmt::format("validation at step {}: dev loss {:.4f}, ppl {:.2f}{}{}", progress_.step, r.loss, r.ppl,
                  r.has_bleu ? fmt::format(", BLEU {:.2f}", r.bleu) : "", improved ? " (best so far)" : ""));
  nlohmann::json record{{"type", "valid"}, {"step", progress_.step}, {"loss", r.loss},  {"nll", r.nll},
                        {"ppl", r.ppl},    {"elapsed", elapsed()},   {"best", improved}};
  if (r.has_bleu) record["bleu"] = r.bleu;
  if (metrics_) {
    metrics_->write(record);
    write_curves();
  }
  progress_.validated_step = progress_.step;
  if (tc_.patience > 0 && progress_.validations_without_improvement >= tc_.patience) stop_early_ = true;
}

// curves.svg, redrawn from metrics.jsonl: a picture beside the records, so a failure to write it
// is a warning, not the end of the run.
void Trainer::write_curves() const {
  try {
    write_file_atomic(dir_.file("curves.svg"),
                      learning_curves_svg({read_run_curves(dir_.file("metrics.jsonl"), run_name(dir_.path()))}));
  } catch (const Error& e) {
    spdlog::warn("curves.svg not written: {}", e.what());
  }
}

// training.average_last: the mean of the last checkpoints often translates better than any one
// of them (the steps' noise averages out). It is validated like a checkpoint and becomes
// model.safetensors only when it beats the best so far. Rank 0 reads the checkpoints and sends
// the mean to the other ranks, which validate their share of the dev set. The model is left
// holding the mean; trainer_state.safetensors keeps the last step's parameters for --resume.
void Trainer::try_checkpoint_average() {
  if (tc_.average_last < 2 || !validator_) return;
  SafeTensorFile mean;  // empty: fewer than 2 checkpoints
  if (dist::is_root()) {
    std::vector<std::string> files = dir_.checkpoint_files();
    if (files.size() > static_cast<size_t>(tc_.average_last))
      files.erase(files.begin(), files.end() - tc_.average_last);
    if (files.size() >= 2) {
      mean = average_checkpoints(files);
      mean.metadata["step"] = std::to_string(progress_.step);
      mean.metadata["averaged"] = std::to_string(files.size()) + " checkpoints, " +
                                  fs::path(files.front()).stem().string() + " .. " +
                                  fs::path(files.back()).stem().string();
    }
  }
  const std::string origin = "the mean of the last checkpoints";
  if (dist::size() > 1) {
    const std::string bytes = dist::broadcast(mean.tensors.empty() ? std::string() : serialize_safetensors(mean));
    if (!dist::is_root() && !bytes.empty()) mean = parse_safetensors(bytes, origin);
  }
  if (mean.tensors.empty()) {
    log("training.average_last: fewer than 2 checkpoints, nothing to average");
    return;
  }
  load_parameters(mean, origin, model_->parameters());
  model_->set_training(false);
  const ValidationResult r = run_validator();
  // Data-parallel: an interrupt during it, now known to every rank, stops them all; the mean is
  // not kept (the best checkpoint stays the model). A single process never sees one here: its
  // validation's translation throws Interrupted itself.
  if (interrupt_seen_) throw Interrupted(/*every_rank=*/true);
  const double metric = validation_metric(r);
  const bool better = beats_best(metric);
  if (better) {
    progress_.best_metric = metric;
    progress_.has_best = true;
    if (dist::is_root()) {
      write_safetensors(dir_.file("model.safetensors"), mean);
      // The state keeps the last step's parameters but takes the mean's score: a resumed run then
      // replaces this model only with a better one.
      record_best_metric(dir_.file("trainer_state.safetensors"), metric);
    }
  }
  const std::string averaged = mean.metadata.at("averaged");
  log(fmt::format("mean of {}: dev loss {:.4f}{}: {}", averaged, r.loss,
                  r.has_bleu ? fmt::format(", BLEU {:.2f}", r.bleu) : "",
                  better ? "better than the best checkpoint, kept as model.safetensors" : "not better, not kept"));
  nlohmann::json record{{"type", "average"}, {"step", progress_.step}, {"checkpoints", averaged},
                        {"loss", r.loss},    {"elapsed", elapsed()},   {"kept", better}};
  if (r.has_bleu) record["bleu"] = r.bleu;
  if (metrics_) metrics_->write(record);
}

// The step's group is the next accumulate * N batches; this process takes its accumulate of them.
Shard Trainer::next_shard() {
  Shard shard;
  const int per_rank = tc_.accumulate;
  for (int k = 0; k < per_rank * dist::size(); ++k) {
    // Dropout stream: the batch's place in the data (epoch, index), clear of initialisation's.
    const uint64_t place =
        static_cast<uint64_t>(batches_.epoch()) * batches_.batches_per_epoch() + batches_.batch_index();
    Batch b = batches_.next();
    shard.group_labels += b.num_labels();
    if (k / per_rank != dist::rank()) continue;
    shard.batches.push_back(std::move(b));
    shard.streams.push_back((place + 1) << 32);
  }
  return shard;
}

bool Trainer::update() {
  const Shard shard = next_shard();
  model_->set_training(true);
  CrossEntropyStats stats =
      accumulate_gradients(*model_, shard, tc_.label_smoothing, {sync_.on_complete(), sync_.between_entries()});
  sync_.finish();
  if (dist::size() > 1) {
    // One small all-reduce for what every rank must decide alike: the loss (skip when
    // non-finite), an interrupt on any rank, and rank 0's clock (max_time).
    double shared[5] = {stats.loss_sum, stats.nll_sum, static_cast<double>(stats.labels), interrupted() ? 1.0 : 0.0,
                        dist::is_root() ? elapsed() : 0.0};
    dist::all_reduce_sum(shared, 5);
    stats.loss_sum = shared[0];
    stats.nll_sum = shared[1];
    stats.labels = static_cast<int64_t>(shared[2]);
    interrupt_seen_ = shared[3] > 0;
    synced_elapsed_ = shared[4];
  }
  const float lr = learning_rate_at(progress_.step + 1, budget_elapsed(), tc_);
  if (!apply_update(model_->parameters(), adam_, stats.loss_sum, tc_.clip_norm, lr).applied) {
    bar_.clear();
    count_skipped_update(progress_.skipped_in_a_row, tc_.max_bad_steps, "step " + std::to_string(progress_.step + 1));
    return false;
  }
  progress_.skipped_in_a_row = 0;
  ++progress_.step;
  last_lr_ = lr;
  window_.loss_sum += stats.loss_sum;
  window_.nll_sum += stats.nll_sum;
  window_.labels += stats.labels;
  ++window_.steps;
  return true;
}

void Trainer::show_progress(float lr) {
  const double secs = seconds_since(window_.start);
  const double loss = window_.loss_sum / std::max<int64_t>(window_.labels, 1);
  std::string eta;
  if (tc_.max_steps > 0)
    eta = " ETA " + format_duration(elapsed() / progress_.step * (tc_.max_steps - progress_.step));
  else if (tc_.max_time > 0)
    eta = " ETA " + format_duration(std::max(0.0, tc_.max_time - elapsed()));
  if (dist::is_root())
    bar_.update(fmt::format("epoch {} step {} loss {:.3f} {:.0f} tok/s lr {:.2e} {}{}", batches_.epoch() + 1,
                            progress_.step, loss, window_.labels / std::max(secs, 1e-9), lr, format_duration(elapsed()),
                            eta));
  if (progress_.step % tc_.log_every != 0) return;
  const double nll = window_.nll_sum / std::max<int64_t>(window_.labels, 1);
  last_loss_ = loss;
  nlohmann::json record{
      {"type", "train"},     {"step", progress_.step}, {"epoch", batches_.epoch() + 1},         {"loss", loss},
      {"nll", nll},          {"ppl", std::exp(nll)},   {"tokens_per_s", window_.labels / secs}, {"lr", lr},
      {"elapsed", elapsed()}};
  std::string exchange;
  if (dist::size() > 1) {
    const GradientSync::Totals& now = sync_.totals();
    const double steps = std::max<int64_t>(now.steps - window_sync_start_.steps, 1);
    const double mb = (now.bytes - window_sync_start_.bytes) / steps / 1e6;
    const double least_ms = 1e3 * (now.least_wait_seconds - window_sync_start_.least_wait_seconds) / steps;
    const double most_ms = 1e3 * (now.most_wait_seconds - window_sync_start_.most_wait_seconds) / steps;
    record["allreduce_mb_per_step"] = mb;
    record["allreduce_wait_ms_per_step_min"] = least_ms;
    record["allreduce_wait_ms_per_step_max"] = most_ms;
    exchange = fmt::format(
        ", all-reduce {:.2f} MB/step, waited {:.1f}-{:.1f} ms/step after backward (least-most "
        "waiting rank)",
        mb, least_ms, most_ms);
    window_sync_start_ = now;
  }
  log(fmt::format("epoch {} step {}: loss {:.4f} nll {:.4f} ppl {:.2f}, {:.0f} target tokens/s, lr {:.3e}, {}{}",
                  batches_.epoch() + 1, progress_.step, loss, nll, std::exp(nll), window_.labels / secs, lr,
                  format_duration(elapsed()), exchange));
  if (metrics_) metrics_->write(record);
  window_ = Window();
}

void Trainer::validate_or_save() {
  try {
    validate();
  } catch (const Interrupted&) {
    throw;  // run() saves it
  } catch (const ValidationFailed&) {
    // Every rank is here (the failure was shared): the others wait for rank 0's save before
    // they leave, since a rank's error ends them all.
    save_after_failed_validation(/*every_rank=*/true);
    throw;
  } catch (...) {
    save_after_failed_validation(/*every_rank=*/false);
    throw;
  }
}

void Trainer::save_after_failed_validation(bool every_rank) {
  bar_.clear();
  save_checkpoint();
  if (every_rank) dist::barrier();
  if (!every_rank || dist::is_root())
    spdlog::warn("validation failed: checkpoint saved at step {}; continue with --resume", progress_.step);
}

// Data-parallel ranks must hold the same parameters; a cheap hash, compared at each checkpoint,
// turns a silent divergence into an error before it is saved.
void Trainer::check_ranks_agree() const {
  if (dist::size() == 1) return;
  if (!dist::all_equal(parameter_checksum(model_->parameters())))
    throw Error("the processes' parameters differ at step " + std::to_string(progress_.step) +
                " (data-parallel ranks diverged); the last checkpoint is kept");
}

const char* Trainer::stop_condition() const {
  if (tc_.max_steps > 0 && progress_.step >= tc_.max_steps) return "max_steps";
  if (tc_.max_epochs > 0 && batches_.epoch() >= tc_.max_epochs) return "max_epochs";
  if (tc_.max_time > 0 && budget_elapsed() >= tc_.max_time) return "max_time";
  if (stop_early_) return "patience";
  return nullptr;
}

TrainSummary Trainer::run() {
  const char* stop_reason = nullptr;
  try {
    // A validation that an interrupt cut short is run now, so the best model stays the same.
    // Saved as after any validation, so that a run that stops here is not validated a third time.
    if (resume_ && validator_ && progress_.step % tc_.validate_every == 0 &&
        progress_.validated_step != progress_.step) {
      check_ranks_agree();
      validate_or_save();
      save_checkpoint();
    }
    while (!(stop_reason = stop_condition())) {
      // Several ranks stop together, after the update in which one of them saw the interrupt.
      if (dist::size() == 1) throw_if_interrupted();
      if (interrupt_seen_) throw Interrupted();
      if (!update()) continue;
      show_progress(last_lr_);
      if (progress_.step % tc_.validate_every == 0) {
        check_ranks_agree();  // before the validation, which may write the best model
        validate_or_save();
        save_checkpoint();
      }
    }
    if (validator_ ? progress_.validated_step != progress_.step : progress_.step % tc_.validate_every != 0) {
      check_ranks_agree();
      validate_or_save();
      save_checkpoint();
    }
    if (interrupt_seen_) throw Interrupted();  // seen by every rank during the last validation
  } catch (const Interrupted&) {
    bar_.clear();
    check_ranks_agree();  // every rank is here: the ranks stop together
    save_checkpoint(/*snapshot=*/progress_.step > 0 && progress_.step % tc_.validate_every == 0);
    if (dist::is_root())
      spdlog::warn("interrupted: checkpoint saved at step {}; continue with --resume", progress_.step);
    if (dist::size() == 1) throw;
    dist::barrier();  // all ranks stopped here, and rank 0 has saved: they can leave together
    throw Interrupted(/*every_rank=*/true);
  }
  bar_.clear();
  if (window_.labels > 0) last_loss_ = window_.loss_sum / window_.labels;
  spdlog::info("training stopped ({}) after {} steps, {}", stop_reason, progress_.step, format_duration(elapsed()));
  try_checkpoint_average();
  return {progress_.step, last_loss_, progress_.best_metric, stop_reason};
}

TrainSummary train_model(const Config& config) { return Trainer(config).run(); }

}  // namespace heed
