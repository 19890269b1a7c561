#pragma once
// Files a command writes into a directory that appear there together, once the command has
// succeeded (translate --attention-map: one picture per line). Until commit() they are written
// to a hidden staging directory inside it; a command that fails leaves the directory as it was
// (and removes it if it made it), not the pictures of the lines before the failure.
#include <string>
#include <vector>

namespace heed {

class StagedFiles {
 public:
  explicit StagedFiles(std::string dir);  // creates dir if missing; throws heed::Error naming it
  ~StagedFiles();                         // without commit(): removes what was staged
  StagedFiles(const StagedFiles&) = delete;
  StagedFiles& operator=(const StagedFiles&) = delete;

  // Writes `content` (atomically) as `name` in the staging directory.
  void write(const std::string& name, const std::string& content);
  // Moves every staged file into the directory, replacing files of the same name.
  void commit();

 private:
  std::string dir_, staging_;
  bool created_dir_ = false, committed_ = false;
  std::vector<std::string> names_;
};

}  // namespace heed
