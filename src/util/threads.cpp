#include "util/threads.hpp"

#include <omp.h>

#include <cstdlib>
#include <thread>

namespace heed {
namespace {
int g_threads = 0;
}

void set_num_threads(int n) {
  if (n <= 0) {
    if (const char* env = std::getenv("HEED_THREADS")) n = std::atoi(env);
  }
  if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
  if (n <= 0) n = 1;
  g_threads = n;
  omp_set_num_threads(n);
  omp_set_max_active_levels(1);  // a parallel region inside another (a decoding worker's) runs on its thread
}

int num_threads() {
  if (g_threads == 0) set_num_threads(0);
  return g_threads;
}

}  // namespace heed
