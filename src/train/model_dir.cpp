#include "train/model_dir.hpp"

#include <cstdio>
#include <filesystem>

namespace fs = std::filesystem;

namespace heed {

std::string ModelDir::file(const std::string& name) const { return (fs::path(dir_) / name).string(); }

std::string ModelDir::checkpoint(int64_t step) const {
  char name[64];
  std::snprintf(name, sizeof name, "step-%08lld.safetensors", static_cast<long long>(step));
  return (fs::path(checkpoints()) / name).string();
}

void remove_stale_temporaries(const std::string& dir) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename().string().find(".tmp.") != std::string::npos) fs::remove(e.path());
}

}  // namespace heed
