#include "util/threads.hpp"

#include <omp.h>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "util/error.hpp"

namespace heed {
namespace {
int g_threads = 0;

int parse_thread_count(const std::string& text, const std::string& origin) {
  int n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 1)
    throw UsageError(origin + ": got " + text + ", expected an integer >= 1");
  return n;
}
}  // namespace

void restart_with_bounded_spin(char** argv, char** envp) {
  size_t n = 0;
  for (; envp[n]; ++n)  // getenv() cannot be used yet: libc has not set up its environment
    if (std::strncmp(envp[n], "GOMP_SPINCOUNT=", 15) == 0 || std::strncmp(envp[n], "OMP_WAIT_POLICY=", 16) == 0)
      return;  // the user's choice (and, after the restart, ours)
  auto** env = static_cast<char**>(std::malloc((n + 2) * sizeof(char*)));
  if (!env) return;
  std::memcpy(env, envp, n * sizeof(char*));
  env[n] = const_cast<char*>(kSpinCountSetting);
  env[n + 1] = nullptr;
  ::execve("/proc/self/exe", argv, env);
  std::free(env);
}

void set_num_threads(int n) {
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  std::string origin = "--threads";
  if (n <= 0) {
    if (const char* env = std::getenv("HEED_THREADS")) {
      origin = "HEED_THREADS";
      n = parse_thread_count(env, origin);
    } else {
      n = cores;
    }
  }
  if (n > kMaxThreadsPerCore * cores) {
    spdlog::warn("{} {}: more than {} threads per core on {} core(s); using {}", origin, n, kMaxThreadsPerCore, cores,
                 kMaxThreadsPerCore * cores);
    n = kMaxThreadsPerCore * cores;
  }
  g_threads = n;
  omp_set_num_threads(n);
  omp_set_max_active_levels(1);  // a parallel region inside another (a decoding worker's) runs on its thread
}

int num_threads() {
  if (g_threads == 0) set_num_threads(0);
  return g_threads;
}

}  // namespace heed
