// AtomicFile: a regular file is replaced whole (mode kept, symlinks followed); a FIFO, a device or
// a descriptor path (/dev/fd/N) is written in place and stays what it was.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "../temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"

namespace fs = std::filesystem;
using heed::AtomicFile;
using heed::read_file;
using heed::write_file_atomic;
using heed::test::TempDir;

namespace {

mode_t file_type(const std::string& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode & S_IFMT;
}

mode_t permissions(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

// Everything readable now from a non-blocking descriptor.
std::string drain(int fd) {
  std::string got;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) got.append(buf, size_t(n));
  return got;
}

size_t leftovers(const TempDir& dir) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir.path))
    n += e.path().filename().string().find(".tmp.") != std::string::npos;
  return n;
}

}  // namespace

TEST_CASE("a new or regular file is replaced whole, keeping its mode") {
  TempDir dir("atomic-file");
  const std::string path = dir / "out.txt";
  write_file_atomic(path, "first\n");
  CHECK(read_file(path) == "first\n");

  REQUIRE(::chmod(path.c_str(), 0600) == 0);
  write_file_atomic(path, "second\n");
  CHECK(read_file(path) == "second\n");
  CHECK(permissions(path) == 0600);
  CHECK(file_type(path) == S_IFREG);
  CHECK(leftovers(dir) == 0);

  {  // not committed: the old file stays, the temporary goes
    AtomicFile f(path);
    f.write("never\n");
  }
  CHECK(read_file(path) == "second\n");
  CHECK(leftovers(dir) == 0);
}

TEST_CASE("through a symlink the target is written and the link kept") {
  TempDir dir("atomic-link");
  const std::string target = dir / "target.txt", link = dir / "link.txt";
  write_file_atomic(target, "old\n");
  REQUIRE(::chmod(target.c_str(), 0640) == 0);
  fs::create_symlink("target.txt", link);  // relative, as `ln -s` makes them
  write_file_atomic(link, "new\n");
  CHECK(file_type(link) == S_IFLNK);
  CHECK(fs::read_symlink(link) == "target.txt");
  CHECK(read_file(target) == "new\n");
  CHECK(permissions(target) == 0640);

  const std::string dangling = dir / "dangling.txt";  // a link to a file not there yet
  fs::create_symlink(dir / "created.txt", dangling);
  write_file_atomic(dangling, "made\n");
  CHECK(file_type(dangling) == S_IFLNK);
  CHECK(read_file(dir / "created.txt") == "made\n");
  CHECK(leftovers(dir) == 0);
}

TEST_CASE("a FIFO is written in place and stays a FIFO") {
  TempDir dir("atomic-fifo");
  const std::string fifo = dir / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // a reader, so the writer's open returns
  REQUIRE(reader >= 0);
  {
    AtomicFile f(fifo);
    CHECK(f.in_place());
    f.write("through the pipe\n");
    f.flush();
    f.commit();
  }
  CHECK(drain(reader) == "through the pipe\n");
  ::close(reader);
  CHECK(file_type(fifo) == S_IFIFO);
  CHECK(leftovers(dir) == 0);
}

TEST_CASE("/dev/fd/N writes to the process's own descriptor") {
  int fds[2];
  REQUIRE(::pipe2(fds, O_NONBLOCK) == 0);
  write_file_atomic("/dev/fd/" + std::to_string(fds[1]), "via the descriptor\n");
  CHECK(drain(fds[0]) == "via the descriptor\n");
  ::close(fds[0]);
  ::close(fds[1]);
  CHECK_THROWS_WITH(write_file_atomic("/dev/fd/999", "x"), "cannot write /dev/fd/999: Bad file descriptor");
}

TEST_CASE("a character device is written in place, never replaced") {
  TempDir dir("atomic-device");
  // As root, a private copy of /dev/null (char 1:3): the test never risks the real one.
  std::string device = dir / "null";
  if (::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) device = "/dev/null";
  write_file_atomic(device, "discarded\n");
  CHECK(file_type(device) == S_IFCHR);
  CHECK(leftovers(dir) == 0);
}

TEST_CASE("a directory or a file the user may not write is an error naming the path") {
  TempDir dir("atomic-errors");
  CHECK_THROWS_WITH(write_file_atomic(dir.path.string(), "x"),
                    "cannot write " + dir.path.string() + ": Is a directory");
  // Reading one was "" (an ifstream opens a directory and reads nothing), named as corrupt content.
  CHECK_THROWS_WITH(read_file(dir.path.string()), "cannot read " + dir.path.string() + ": it is a directory");
  if (::geteuid() != 0) {  // root may write anything
    const std::string locked = dir / "locked.txt";
    write_file_atomic(locked, "kept\n");
    REQUIRE(::chmod(locked.c_str(), 0444) == 0);
    CHECK_THROWS_WITH(write_file_atomic(locked, "x"), "cannot write " + locked + ": Permission denied");
    CHECK(read_file(locked) == "kept\n");
  }
}
