#pragma once
// Where a command's results go: standard output, or a file written atomically (complete or not
// at all; a FIFO, a device or /dev/fd/N in place, see util/atomic_file.hpp). Each write to
// standard output or in place is flushed, so pipes see results chunk by chunk.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "util/atomic_file.hpp"
#include "util/error.hpp"

namespace heed::cli {

// Writes results to standard output and flushes them; a failed write (a full disk, a closed
// descriptor) throws heed::Error, so that no command ends with exit 0 and its result lost.
inline void print(const std::string& text) {
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0)
    throw Error(std::string("cannot write to standard output: ") + std::strerror(errno));
}

class Output {
 public:
  explicit Output(const std::string& path) {
    if (!path.empty() && path != "-") file_.emplace(path);
  }
  void write(const std::string& text) {
    if (file_) {
      file_->write(text);
      file_->flush();
    } else {
      print(text);
    }
  }
  void finish() {
    if (file_) file_->commit();
  }

 private:
  std::optional<AtomicFile> file_;
};

}  // namespace heed::cli
