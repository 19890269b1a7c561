#include "util/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <system_error>

#include "util/error.hpp"
#include "util/parse_number.hpp"

namespace heed {
namespace {

constexpr int kMaxSymlinks = 40;  // as the kernel's limit (ELOOP)

// The descriptor a path names by number: /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N.
// Opening such a path again would start a new file description (offset 0, no O_APPEND, or, for
// a pipe, another end): the process's own descriptor is the one the caller meant.
std::optional<int> descriptor_path(std::string_view path) {
  if (path == "/dev/stdout") return STDOUT_FILENO;
  if (path == "/dev/stderr") return STDERR_FILENO;
  for (std::string_view prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (path.substr(0, prefix.size()) != prefix) continue;
    if (const std::optional<int> fd = parse_number<int>(path.substr(prefix.size()))) return fd;
  }
  return std::nullopt;
}

struct Resolved {
  std::string path;       // symlinks followed
  std::optional<int> fd;  // the path names this open descriptor
};

// Follows symlinks one at a time (so that a link to /dev/stdout is seen as such); a dangling link
// resolves to the file it would create.
Resolved resolve(const std::string& given) {
  std::filesystem::path p = given;
  for (int hops = 0; hops <= kMaxSymlinks; ++hops) {
    if (auto fd = descriptor_path(p.string())) return {p.string(), fd};
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return {p.string(), std::nullopt};
    std::error_code ec;
    const std::filesystem::path link = std::filesystem::read_symlink(p, ec);
    if (ec) throw Error("cannot write " + given + ": " + ec.message());
    p = link.is_absolute() ? link : p.parent_path() / link;
  }
  throw Error("cannot write " + given + ": " + std::strerror(ELOOP));
}

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  const Resolved resolved = resolve(path_);
  target_ = resolved.path;
  if (resolved.fd) {
    const int fd = ::fcntl(*resolved.fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0 || !(file_ = ::fdopen(fd, "wb"))) {
      if (fd >= 0) ::close(fd);
      fail("cannot write");
    }
    return;
  }
  struct stat st {};
  const bool exists = ::stat(target_.c_str(), &st) == 0;
  if (!exists && errno != ENOENT) fail("cannot write");
  if (exists && S_ISDIR(st.st_mode)) {
    errno = EISDIR;
    fail("cannot write");
  }
  if (exists && !S_ISREG(st.st_mode)) {  // FIFO, device, socket: never replaced
    file_ = std::fopen(target_.c_str(), "wb");
    if (!file_) fail("cannot write");
    return;
  }
  // A file the user may not write is not replaced either (as `> file` would refuse).
  if (exists && ::access(target_.c_str(), W_OK) != 0) fail("cannot write");
  tmp_path_ = target_ + ".tmp." + std::to_string(::getpid());
  file_ = std::fopen(tmp_path_.c_str(), "wb");
  if (!file_) fail("cannot write");
  if (exists) {
    if (::fchmod(fileno(file_), st.st_mode & 07777) != 0) {
      const int error = errno;  // the destructor does not run for a constructor that throws
      std::fclose(file_);
      file_ = nullptr;
      std::remove(tmp_path_.c_str());
      errno = error;
      fail("cannot write");
    }
    if (st.st_uid != ::geteuid() || st.st_gid != ::getegid()) {
      // Only root may give a file away; anyone else keeps the new file as their own.
      const int ignored = ::fchown(fileno(file_), st.st_uid, st.st_gid);
      (void)ignored;
    }
  }
}

AtomicFile::~AtomicFile() {
  if (file_) std::fclose(file_);
  if (!committed_ && !tmp_path_.empty()) std::remove(tmp_path_.c_str());
}

void AtomicFile::fail(const std::string& what) const { throw Error(what + " " + path_ + ": " + std::strerror(errno)); }

void AtomicFile::write(const void* data, size_t size) {
  if (size && std::fwrite(data, 1, size, file_) != size) fail("cannot write");
}

void AtomicFile::flush() {
  if (in_place() && std::fflush(file_) != 0) fail("cannot write");
}

void AtomicFile::commit() {
  if (std::fflush(file_) != 0 || std::ferror(file_)) fail("cannot write");
  if (!in_place() && ::fsync(fileno(file_)) != 0) fail("cannot write");
  const int closed = std::fclose(file_);
  file_ = nullptr;
  if (closed != 0) fail("cannot write");
  if (!in_place() && std::rename(tmp_path_.c_str(), target_.c_str()) != 0)
    throw Error("cannot rename " + tmp_path_ + " to " + target_ + ": " + std::strerror(errno));
  committed_ = true;
}

void write_file_atomic(const std::string& path, std::string_view content) {
  AtomicFile f(path);
  f.write(content);
  f.commit();
}

std::string read_file(const std::string& path) {
  std::error_code error;
  // An ifstream opens a directory and then reads nothing: "" would pass for its content.
  if (std::filesystem::is_directory(path, error)) throw Error("cannot read " + path + ": it is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read " + path + ": " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw Error("cannot read " + path);
  return ss.str();
}

}  // namespace heed
