#pragma once
// One training run per model directory: an exclusive flock on DIR/train.lock, held for the
// lifetime of the object and released by the kernel when the process ends, however it ends. The
// file holds the holder's PID, so that a second run can name it.
#include <string>

namespace heed {

class RunLock {
 public:
  // Creates `dir` if needed. Throws heed::UsageError naming the PID when another process holds it.
  explicit RunLock(const std::string& dir);
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

  static constexpr const char* kFileName = "train.lock";

 private:
  int fd_ = -1;
};

}  // namespace heed
