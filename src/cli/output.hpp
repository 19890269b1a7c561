#pragma once
// Where a command's results go: standard output, or a file written atomically (complete or not
// at all, see util/atomic_file.hpp). Each write is flushed so pipes see results chunk by chunk.
#include <cstdio>
#include <optional>
#include <string>

#include "util/atomic_file.hpp"
#include "util/error.hpp"

namespace heed::cli {

class Output {
 public:
  explicit Output(const std::string& path) {
    if (!path.empty() && path != "-") file_.emplace(path);
  }
  void write(const std::string& text) {
    if (file_) {
      file_->write(text);
    } else if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
      throw Error("cannot write to standard output");
    }
  }
  void finish() {
    if (file_) file_->commit();
  }

 private:
  std::optional<AtomicFile> file_;
};

}  // namespace heed::cli
