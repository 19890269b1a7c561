#include "util/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "util/error.hpp"

namespace heed {

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  tmp_path_ = path_ + ".tmp." + std::to_string(getpid());
  file_ = std::fopen(tmp_path_.c_str(), "wb");
  if (!file_) throw Error("cannot write " + path_ + ": " + std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (file_) std::fclose(file_);
  if (!committed_) std::remove(tmp_path_.c_str());
}

void AtomicFile::write(const void* data, size_t size) {
  if (size && std::fwrite(data, 1, size, file_) != size)
    throw Error("cannot write " + path_ + ": " + std::strerror(errno));
}

void AtomicFile::commit() {
  if (std::fflush(file_) != 0 || fsync(fileno(file_)) != 0)
    throw Error("cannot write " + path_ + ": " + std::strerror(errno));
  std::fclose(file_);
  file_ = nullptr;
  if (std::rename(tmp_path_.c_str(), path_.c_str()) != 0)
    throw Error("cannot rename " + tmp_path_ + " to " + path_ + ": " + std::strerror(errno));
  committed_ = true;
}

void write_file_atomic(const std::string& path, std::string_view content) {
  AtomicFile f(path);
  f.write(content);
  f.commit();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read " + path + ": " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw Error("cannot read " + path);
  return ss.str();
}

}  // namespace heed
