#pragma once
// A fresh temporary directory for one test, removed with everything in it at the end.
#include <unistd.h>

#include <filesystem>
#include <string>

namespace heed::test {

struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& name) {
    static int counter = 0;
    path = std::filesystem::temp_directory_path() /
           ("heed-" + name + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

}  // namespace heed::test
