#pragma once
// Files that appear whole or not at all: written to `path.tmp.<pid>`, flushed, fsync'ed and
// renamed over `path`. A process killed at any moment leaves the old file or the new one.
#include <cstdio>
#include <string>
#include <string_view>

namespace heed {

class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  ~AtomicFile();  // removes the temporary file unless commit() succeeded
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t size);
  void write(std::string_view text) { write(text.data(), text.size()); }
  std::FILE* stream() { return file_; }
  void commit();  // flush, fsync, rename; throws heed::Error naming the path on failure

  const std::string& path() const { return path_; }

 private:
  std::string path_, tmp_path_;
  std::FILE* file_ = nullptr;
  bool committed_ = false;
};

// Convenience: write a whole file atomically.
void write_file_atomic(const std::string& path, std::string_view content);
// Read a whole file; throws heed::Error naming the path when it cannot be read.
std::string read_file(const std::string& path);

}  // namespace heed
