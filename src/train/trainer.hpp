#pragma once
// `heed train`: from raw parallel text to a model directory. The loop: token-budget batches
// (data/batching) → forward → label-smoothed loss → backward (accumulating `accumulate` batches)
// → non-finite check → global-norm clipping → Adam(W) with the scheduled learning rate. Every
// validate_every steps: dev cross-entropy and BLEU, best model kept, checkpoint written. All
// state needed to continue exactly (parameters, moments, step, data position, dropout RNG,
// elapsed time, early-stopping counters) is one atomically written file.
//
// Trainer splits the run into the steps other work hooks into (several processes, another
// precision, other tasks): setup in the constructor, then update / validate / save_checkpoint /
// log, driven by run().
//
// Data-parallel (mpirun -np N, see dist/): every process runs this same loop on the same model.
// An update takes N * accumulate batches; process r computes the r-th accumulate of them, and
// GradientSync sums the gradients, so N processes train the model one process trains with
// accumulate * N. Decisions (skip a non-finite step, stop for time or an interrupt) use values
// summed over the processes, so all take them at the same step. Rank 0 alone writes: it learns
// the tokenizer (the others receive it), fills the corpus cache before the others read it, and
// writes config, checkpoints, trainer state and metrics.jsonl; validation is sharded.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "config/config.hpp"
#include "data/batching.hpp"
#include "data/parallel_corpus.hpp"
#include "models/seq2seq.hpp"
#include "text/tokenizers.hpp"
#include "train/gradient_sync.hpp"
#include "train/metrics_log.hpp"
#include "train/model_dir.hpp"
#include "train/optimizer.hpp"
#include "train/precision_setup.hpp"
#include "train/progress.hpp"
#include "train/run_lock.hpp"
#include "train/trainer_state.hpp"
#include "train/update.hpp"
#include "train/validation.hpp"

namespace heed {

struct TrainSummary {
  int64_t steps = 0;
  double final_loss = 0;  // label-smoothed loss per label of the last log window
  double best_metric = 0;
  std::string stop_reason;
};

class Trainer {
 public:
  // Setup: locks the model directory (one run at a time), checks it, prepares the tokenizer,
  // the dev set, the model and the optimizer, restores the trainer state when resuming and loads
  // the corpus; only then writes config.json and tokenizer.json. `config.model_dir` names the
  // directory.
  explicit Trainer(const Config& config);

  // Updates until a stop condition (max_steps, max_epochs, max_time, patience), validating and
  // checkpointing every validate_every steps. On an interrupt it saves a checkpoint and rethrows.
  TrainSummary run();

  // One update from `accumulate` batches; false when it was skipped (non-finite loss or gradient).
  bool update();
  // Dev loss (and BLEU): keeps model.safetensors when the metric improved.
  void validate();
  ValidationResult run_validator();
  void write_curves() const;
  void try_checkpoint_average();
  // The validation metric (BLEU or dev loss), and whether it beats the best so far.
  double validation_metric(const ValidationResult& r) const;
  bool beats_best(double metric) const;
  // validate(), saving a checkpoint first when it fails.
  void validate_or_save();
  // A validation that fails (a dev line the model cannot take, no memory) must not lose the
  // training since the last checkpoint: it is saved first, and a resumed run validates again.
  // `every_rank`: all data-parallel ranks failed together and wait here for rank 0's save.
  void save_after_failed_validation(bool every_rank);
  // trainer_state.safetensors and, when `snapshot`, checkpoints/step-N.safetensors (pruned to
  // keep_last). An interrupt at an unscheduled step saves the state alone, so that checkpoints/ and
  // the mean of its last ones are those of the run that was not interrupted.
  void save_checkpoint(bool snapshot = true);

 private:
  using Clock = std::chrono::steady_clock;
  struct Window {  // training statistics since the last log line
    double loss_sum = 0, nll_sum = 0;
    int64_t labels = 0, steps = 0;
    Clock::time_point start = Clock::now();
  };

  // The files a checkpoint writes besides the trainer state, from the current parameters: the
  // step's checkpoint (snapshot) and, without validation, model.safetensors; then old checkpoints
  // beyond keep_last go. The constructor of a resumed run calls it too: a kill may have come
  // between the trainer state and them.
  void write_step_files(bool snapshot);
  double elapsed() const;
  // The clock of max_time and of a time budget's decay: with several ranks, rank 0's elapsed() as
  // of the last update, so that every rank stops at the same step with the same learning rate.
  double budget_elapsed() const;
  Shard next_shard();
  void check_ranks_agree() const;
  const char* stop_condition() const;  // nullptr while training goes on
  void show_progress(float lr);
  void log(const std::string& text);

  const Config config_;
  const TrainingConfig& tc_ = config_.training;
  PrecisionSetup precision_;              // checked before the lock: a bf16 run on a CPU without bf16 touches nothing
  const std::unique_ptr<RunLock> lock_;  // rank 0's
  ModelDir dir_;
  bool resume_;
  Tokenizers tokenizers_;
  std::unique_ptr<Validator> validator_;
  std::unique_ptr<Seq2Seq> model_;
  Adam adam_;
  GradientSync sync_;
  TrainerProgress progress_;
  LoadedCorpus train_;
  BatchIterator batches_;
  std::optional<MetricsLog> metrics_;  // opened once the run's files are written
  ProgressLine bar_;
  Clock::time_point session_start_ = Clock::now();
  Window window_;
  GradientSync::Totals window_sync_start_;
  double synced_elapsed_ = 0;    // rank 0's elapsed(), as of the last update
  bool interrupt_seen_ = false;  // by some rank, as of the last update
  double last_loss_ = 0;
  float last_lr_ = 0;
  bool stop_early_ = false;
};

// Trainer(config).run(): what `heed train` runs.
TrainSummary train_model(const Config& config);

}  // namespace heed
