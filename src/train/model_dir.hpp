#pragma once
// The files of a model directory that training writes, by name.
#include <cstdint>
#include <string>
#include <vector>

namespace heed {

struct Config;

class ModelDir {
 public:
  explicit ModelDir(std::string dir) : dir_(std::move(dir)) {}
  const std::string& path() const { return dir_; }
  std::string file(const std::string& name) const;  // <dir>/<name>
  std::string checkpoint(int64_t step) const;       // <dir>/checkpoints/step-00000042.safetensors
  std::string checkpoints() const { return file("checkpoints"); }
  std::vector<std::string> checkpoint_files() const;  // oldest first (the names sort by step)

 private:
  std::string dir_;
};

// A run's name (the legend of its curves, the model a server names): its directory's last
// component ("runs/a/" → "a"; "run" when there is none).
std::string run_name(const std::string& dir);

// The model directory of a run, checked before anything is written: a new run needs one without
// a trainer state, --resume one with it and a config.json whose model-defining fields
// (model_defining_change) the run keeps.
ModelDir check_run_directory(const Config& config);

// Removes temporary files of atomic writes (NAME.tmp.PID) that a killed run left in `dir`.
void remove_stale_temporaries(const std::string& dir);

}  // namespace heed
