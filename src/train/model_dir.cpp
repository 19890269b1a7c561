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

ModelDir check_run_directory(const Config& config) {
  ModelDir dir(config.model_dir);
  const bool resume = config.training.resume;
  const std::string state_path = dir.file("trainer_state.safetensors");
  if (resume && !fs::exists(state_path))
    throw UsageError("--resume: " + dir.path() + " has no trainer_state.safetensors to resume from");
  if (!resume && fs::exists(state_path))
    throw UsageError(dir.path() + " already holds a training run; use --resume to continue it, or another directory");
  if (resume) {
    const FieldChange change = model_defining_change(load_model_config(dir.path()), config);
    if (!change.path.empty())
      throw UsageError("--resume cannot change " + change.path + " (" + change.trained.dump() + " in " +
                       dir.file("config.json") + ", now " + change.requested.dump() +
                       "): it defines the trained model; train into a new directory instead");
  }
  return dir;
}

void remove_stale_temporaries(const std::string& dir) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename().string().find(".tmp.") != std::string::npos) fs::remove(e.path());
}

}  // namespace heed
