#include "train/memory_check.hpp"

#include <cstdio>

#include <unistd.h>

#include "util/error.hpp"

namespace heed {
namespace {

double physical_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0;
}

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g GiB", bytes / (1024.0 * 1024 * 1024));
  return buf;
}

}  // namespace

void check_trainable(double parameters, const std::string& sizes, double memory_bytes) {
  if (memory_bytes <= 0) memory_bytes = physical_memory();
  const double needed = parameters * kTrainingBytesPerParameter;
  if (memory_bytes <= 0 || needed <= memory_bytes) return;
  char count[32];
  std::snprintf(count, sizeof count, "%.4g", parameters);
  throw Error("the model would have " + std::string(count) + " parameters, " + gib(needed) +
              " to train (weights, gradients and Adam moments), more than this machine's " + gib(memory_bytes) +
              " of memory: " + sizes);
}

}  // namespace heed
