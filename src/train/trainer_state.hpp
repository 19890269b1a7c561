#pragma once
// The file that lets training continue exactly: <model_dir>/trainer_state.safetensors holds the
// parameters (param.<name>), Adam's moments (adam.m.<name>, adam.v.<name>) and, in its metadata,
// the step, the data position, the dropout RNG, elapsed seconds, early-stopping counters and the
// updates skipped in a row (training.max_bad_steps counts on across a resume); for
// the graph tasks also the parameters kept for the end (best.<name>) and their own counters.
// One file, so a kill between two writes can never pair parameters with foreign moments.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "nn/parameters.hpp"
#include "train/optimizer.hpp"

namespace heed {

struct TrainerProgress {
  int64_t step = 0;
  int64_t epoch = 0;
  uint64_t batch_index = 0;  // next batch of `epoch`
  uint64_t rng_seed = 0, rng_counter = 0;
  double elapsed_seconds = 0;
  double best_metric = 0;
  bool has_best = false;
  int64_t validations_without_improvement = 0;
  int64_t validated_step = 0;                     // step of the last finished dev validation
  int64_t skipped_in_a_row = 0;                   // updates skipped for a non-finite loss since the last applied one
  bool step_checkpoint = false;                   // the step has a checkpoint (checkpoints/step-N)
  std::map<std::string, std::string> task_state;  // a task's own counters (metadata "task.<key>")
};

// A number as the trainer state writes it: every digit, so that it reads back bit for bit.
std::string exact_number(double x);
// The task's number `key` from `progress.task_state`; a missing or malformed one is an error
// naming the trainer state file `path`.
double task_number(const TrainerProgress& progress, const std::string& key, const std::string& path);

// `best` (optional): a copy of the parameters kept aside, in the order of params (tensors
// best.<name>), for a task that restores its best epoch at the end.
void save_trainer_state(const std::string& path, const ParameterSet& params, const Adam& adam,
                        const TrainerProgress& progress, const std::vector<Tensor>* best = nullptr);
// Sets the best validation score of the trainer state at `path` (the rest unchanged, written
// atomically): for a model kept after the state was saved, the mean of the last checkpoints.
void record_best_metric(const std::string& path, double best_metric);
// Loads parameters and moments into `params` / `adam`; returns the progress. With `best`, also
// the kept copy (empty when the file has none).
TrainerProgress load_trainer_state(const std::string& path, const ParameterSet& params, Adam& adam,
                                   std::vector<Tensor>* best = nullptr);

}  // namespace heed
