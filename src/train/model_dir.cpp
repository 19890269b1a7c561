#include "train/model_dir.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>

#include <signal.h>

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

namespace {
bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// step-NNNNNNNN.safetensors, as checkpoint() names them: other files a user keeps beside them (a
// mean written with heed average) are neither pruned nor averaged as steps.
bool is_step_checkpoint(const std::string& name) {
  const std::string prefix = "step-", suffix = ".safetensors";
  return name.size() > prefix.size() + suffix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
         all_digits(name.substr(prefix.size(), name.size() - prefix.size() - suffix.size()));
}
}  // namespace

std::vector<std::string> ModelDir::checkpoint_files() const {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(checkpoints()))
    if (is_step_checkpoint(e.path().filename().string())) files.push_back(e.path().string());
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
// The model a new run would overwrite, "" when there is none: a checkpoint or a model.safetensors
// without the trainer state. Training writes the state before either (before its first
// validation too), so the state was removed since (a run pruned to its model, a quantized copy, a
// model put there by hand); a run killed before its first state leaves neither, and may start over.
std::string held_model_file(const ModelDir& dir) {
  if (fs::is_directory(dir.checkpoints())) {
    const std::vector<std::string> files = dir.checkpoint_files();
    if (!files.empty()) return "checkpoints/" + fs::path(files.back()).filename().string();
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
  for (const auto& e : fs::directory_iterator(dir)) {
    // NAME.tmp.PID, as AtomicFile names them, of a process that has ended: a user's own
    // "notes.tmp.md" stays, and so does the output another heed command is writing there.
    const std::string name = e.path().filename().string();
    const size_t at = name.rfind(".tmp.");
    if (!e.is_regular_file() || at == std::string::npos || at == 0) continue;
    const std::string pid = name.substr(at + 5);
    if (!all_digits(pid) || pid.size() > 9) continue;
    if (::kill(static_cast<pid_t>(std::stol(pid)), 0) == 0 || errno != ESRCH) continue;
    fs::remove(e.path());
  }
}

}  // namespace heed
