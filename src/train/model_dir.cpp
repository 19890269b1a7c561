#include "train/model_dir.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "config/config.hpp"
#include "util/error.hpp"

namespace fs = std::filesystem;

namespace heed {

std::string ModelDir::file(const std::string& name) const { return (fs::path(dir_) / name).string(); }

std::string ModelDir::checkpoint(int64_t step) const {
  char name[64];
  std::snprintf(name, sizeof name, "step-%08lld.safetensors", static_cast<long long>(step));
  return (fs::path(checkpoints()) / name).string();
}

std::vector<std::string> ModelDir::checkpoint_files() const {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(checkpoints()))
    if (e.path().extension() == ".safetensors") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

std::string run_name(const std::string& dir) {
  std::filesystem::path path = std::filesystem::path(dir).lexically_normal();
  if (path.filename().empty()) path = path.parent_path();  // "runs/a/"
  const std::string name = path.filename().string();
  return name.empty() || name == "." || name == ".." ? "run" : name;
}

namespace {
// The model a new run would overwrite, "" when there is none: a checkpoint (training writes the
// trainer state before any, so it was removed since), or a model.safetensors that no training run
// left (no checkpoints/ beside it: a quantized copy, a model put there by hand). A run killed
// before its first checkpoint leaves its best model beside an empty checkpoints/: it may start over.
std::string held_model_file(const ModelDir& dir) {
  if (fs::is_directory(dir.checkpoints())) {
    const std::vector<std::string> files = dir.checkpoint_files();
    return files.empty() ? "" : "checkpoints/" + fs::path(files.back()).filename().string();
  }
  return fs::exists(dir.file("model.safetensors")) ? "model.safetensors" : "";
}
}  // namespace

ModelDir check_run_directory(const Config& config) {
  ModelDir dir(config.model_dir);
  const bool resume = config.training.resume;
  const std::string state_path = dir.file("trainer_state.safetensors");
  if (resume && !fs::exists(state_path))
    throw UsageError("--resume: " + dir.path() + " has no trainer_state.safetensors to resume from");
  if (!resume && fs::exists(state_path))
    throw UsageError(dir.path() + " already holds a training run; use --resume to continue it, or another directory");
  // A model without its trainer state (removed to save space, a quantized copy) cannot be
  // resumed, and a new run would overwrite its files.
  if (const std::string held = resume ? "" : held_model_file(dir); !held.empty())
    throw UsageError(
        dir.path() + " already holds a model (" + held +
        ") but no trainer_state.safetensors to resume it; train into another directory, or remove it first");
  if (resume) {
    const FieldChange change = model_defining_change(load_model_config(dir.path()), config);
    if (!change.path.empty())
      throw UsageError("--resume cannot change " + change.path + " (" + change.trained + " in " +
                       dir.file("config.json") + ", now " + change.requested +
                       "): it defines the trained model; train into a new directory instead");
  }
  return dir;
}

void remove_stale_temporaries(const std::string& dir) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename().string().find(".tmp.") != std::string::npos) fs::remove(e.path());
}

}  // namespace heed
