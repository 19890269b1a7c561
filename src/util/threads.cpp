#include "util/threads.hpp"

#include <omp.h>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>

#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/parse_number.hpp"

namespace heed {
namespace {
int g_threads = 0;

int parse_thread_count(const std::string& text, const std::string& origin) {
  const std::optional<int> n = parse_number<int>(text);
  if (!n || *n < 1) throw UsageError(origin + ": got " + text + ", expected an integer >= 1");
  return *n;
}
// "" when it cannot be read (a sandbox without /proc): then no core is known to be busy.
std::string read_proc_stat() {
  try {
    return read_file("/proc/stat");
  } catch (const Error&) {
    return "";
  }
}

// Busy and total jiffies of the "cpu" line; false when there is none.
bool cpu_jiffies(const std::string& stat, double& busy, double& total) {
  std::istringstream lines(stat);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("cpu ", 0) != 0) continue;
    std::istringstream fields(line.substr(4));
    busy = total = 0;
    double value = 0;
    for (int i = 0; fields >> value; ++i) {
      if (i >= 8) break;  // guest time is already counted in user
      total += value;
      if (i != 3 && i != 4) busy += value;  // idle and iowait are not busy
    }
    return total > 0;
  }
  return false;
}
}  // namespace

double busy_cores(const std::string& stat_before, const std::string& stat_after, int cores) {
  double busy0 = 0, total0 = 0, busy1 = 0, total1 = 0;
  if (!cpu_jiffies(stat_before, busy0, total0) || !cpu_jiffies(stat_after, busy1, total1)) return 0;
  if (total1 <= total0) return 0;
  return std::clamp((busy1 - busy0) / (total1 - total0), 0.0, 1.0) * cores;
}

int threads_for_idle_cores(int cores, double busy) { return std::max(1, cores - static_cast<int>(std::lround(busy))); }

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

void set_num_threads(int n, ThreadUse use) {
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  std::string origin = "--threads";
  if (n <= 0) {
    if (const char* env = std::getenv("HEED_THREADS")) {
      origin = "HEED_THREADS";
      n = parse_thread_count(env, origin);
    } else if (const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE")) {
      // One of an MPI job's processes: the machine's cores are shared out among its processes
      // here (sampling would see the others starting, or not yet).
      const int processes = std::max(1, std::atoi(local));
      n = std::max(1, cores / processes);
      // Said once, by rank 0: the others log warnings and errors only (their logger learns its
      // rank later, from MPI itself).
      const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
      if (!rank || std::string(rank) == "0")
        spdlog::info("{} processes of this job on {} cores: {} thread(s) each (--threads to choose)", processes, cores,
                     n);
    } else if (use == ThreadUse::independent_workers) {
      n = cores;
    } else {
      const std::string before = read_proc_stat();
      std::this_thread::sleep_for(std::chrono::milliseconds(kBusySampleMs));
      const double busy = busy_cores(before, read_proc_stat(), cores);
      n = threads_for_idle_cores(cores, busy);
      if (n < cores)
        spdlog::info(
            "{:.1f} of {} cores busy with other work: using {} thread(s) (--threads or HEED_THREADS to choose)", busy,
            cores, n);
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
