#include "util/staged_files.hpp"

#include <filesystem>
#include <system_error>

#include <unistd.h>

#include "util/atomic_file.hpp"
#include "util/error.hpp"

namespace fs = std::filesystem;

namespace heed {

StagedFiles::StagedFiles(std::string dir) : dir_(std::move(dir)) {
  std::error_code ec;
  created_dir_ = fs::create_directories(dir_, ec);
  if (ec) throw Error("cannot create directory " + dir_ + ": " + ec.message());
  if (!fs::is_directory(dir_)) throw Error(dir_ + " is not a directory");
  staging_ = (fs::path(dir_) / (".staged.tmp." + std::to_string(::getpid()))).string();
  fs::create_directory(staging_, ec);
  if (ec) throw Error("cannot create a staging directory in " + dir_ + ": " + ec.message());
}

StagedFiles::~StagedFiles() {
  std::error_code ec;
  fs::remove_all(staging_, ec);
  if (!committed_ && created_dir_) fs::remove(dir_, ec);  // only if empty: someone may have added files
}

void StagedFiles::write(const std::string& name, const std::string& content) {
  write_file_atomic((fs::path(staging_) / name).string(), content);
  names_.push_back(name);
}

void StagedFiles::commit() {
  for (const std::string& name : names_) {
    std::error_code ec;
    const fs::path to = fs::path(dir_) / name;
    fs::rename(fs::path(staging_) / name, to, ec);
    if (ec) throw Error("cannot move " + to.string() + " into place: " + ec.message());
  }
  committed_ = true;
}

}  // namespace heed
