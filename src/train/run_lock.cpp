#include "train/run_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

#include "util/error.hpp"

namespace heed {
namespace {

// The PID the holder wrote; it writes it just after taking the lock, so a moment may pass.
std::string holder_pid(int fd) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    char buf[32] = {};
    const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    if (n > 0 && buf[n - 1] == '\n') return std::string(buf, size_t(n - 1));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return "unknown";
}

}  // namespace

RunLock::RunLock(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error("cannot create the model directory " + dir + ": " + ec.message());
  const std::string path = (std::filesystem::path(dir) / kFileName).string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error("cannot open " + path + ": " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    const std::string pid = error == EWOULDBLOCK ? holder_pid(fd_) : "";
    ::close(fd_);
    if (error != EWOULDBLOCK) throw Error("cannot lock " + path + ": " + std::strerror(error));
    throw UsageError(dir + " is in use by another training run (PID " + pid + ", holding " + path +
                     "); wait for it to end, or stop it first");
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) != ssize_t(pid.size())) {
    const int error = errno;
    ::close(fd_);
    throw Error("cannot write " + path + ": " + std::strerror(error));
  }
}

RunLock::~RunLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace heed
