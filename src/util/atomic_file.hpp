#pragma once
// Files that appear whole or not at all. A regular file (new, or existing; through a symlink its
// target is written and the link kept) is written to `<file>.tmp.<pid>` beside it, flushed,
// fsync'ed and renamed over it, keeping the old file's mode (and owner, where allowed): a process
// killed at any moment leaves the old file or the new one. Anything else at the path is written
// in place, streaming, because replacing it would destroy it: a FIFO, a device (/dev/null), a
// socket's reader, `/dev/stdout`, `/dev/stderr` and `/dev/fd/N` (bash's `>(cmd)`), the last
// three through the process's own open descriptor.
#include <cstdio>
#include <string>
#include <string_view>

namespace heed {

class AtomicFile {
 public:
  explicit AtomicFile(std::string path);  // throws heed::Error naming the path
  ~AtomicFile();                          // removes the temporary file unless commit() succeeded
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t size);
  void write(std::string_view text) { write(text.data(), text.size()); }
  // Written in place: hands what was written so far to the reader (a pipe sees results chunk by
  // chunk). A temporary file is left alone until commit().
  void flush();
  std::FILE* stream() { return file_; }
  void commit();  // flush, fsync, rename (or, in place, flush); throws heed::Error naming the path

  const std::string& path() const { return path_; }
  bool in_place() const { return tmp_path_.empty(); }

 private:
  [[noreturn]] void fail(const std::string& what) const;

  std::string path_;      // as given, for messages
  std::string target_;    // the file renamed over: path_ with symlinks followed
  std::string tmp_path_;  // empty when written in place
  std::FILE* file_ = nullptr;
  bool committed_ = false;
};

// Convenience: write a whole file atomically.
void write_file_atomic(const std::string& path, std::string_view content);
// Read a whole file; throws heed::Error naming the path when it cannot be read.
std::string read_file(const std::string& path);

}  // namespace heed
