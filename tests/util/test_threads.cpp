// The default thread count on a shared machine: cores busy with other work (from two readings of
// /proc/stat) are left to it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "util/threads.hpp"

using namespace heed;

namespace {
// A /proc/stat with the given "cpu" jiffies: user nice system idle iowait irq softirq steal guest.
std::string stat_text(long user, long system, long idle, long iowait, long guest = 0) {
  return "cpu  " + std::to_string(user) + " 0 " + std::to_string(system) + " " + std::to_string(idle) + " " +
         std::to_string(iowait) + " 0 0 0 " + std::to_string(guest) + " 0\ncpu0 1 2 3 4 5 6 7 8 9 10\nintr 5\n";
}
}  // namespace

TEST_CASE("busy_cores: the busy share of the jiffies between two readings, times the cores", "[threads]") {
  // 10 jiffies per core pass on 2 cores: 20 in all.
  CHECK(busy_cores(stat_text(100, 50, 1000, 10), stat_text(110, 50, 1010, 10), 2) == Approx(1.0));  // one core spins
  CHECK(busy_cores(stat_text(100, 50, 1000, 10), stat_text(100, 50, 1020, 10), 2) == Approx(0.0));  // idle
  CHECK(busy_cores(stat_text(100, 50, 1000, 10), stat_text(115, 5 + 50, 1000, 10), 2) == Approx(2.0));
  CHECK(busy_cores(stat_text(100, 50, 1000, 10), stat_text(100, 50, 1010, 20), 2) == Approx(0.0));  // iowait waits
  // guest time is counted in user already: not twice
  CHECK(busy_cores(stat_text(100, 50, 1000, 10, 0), stat_text(110, 50, 1010, 10, 10), 2) == Approx(1.0));
  // no usable readings: nothing is known to be busy
  CHECK(busy_cores("", stat_text(1, 1, 1, 1), 2) == 0);
  CHECK(busy_cores(stat_text(1, 1, 1, 1), "intr 5\n", 2) == 0);
  CHECK(busy_cores(stat_text(1, 1, 1, 1), stat_text(1, 1, 1, 1), 2) == 0);
}

TEST_CASE("threads_for_idle_cores leaves busy cores alone, and keeps one thread", "[threads]") {
  CHECK(threads_for_idle_cores(2, 0.0) == 2);
  CHECK(threads_for_idle_cores(2, 0.4) == 2);  // a passing blip
  CHECK(threads_for_idle_cores(2, 0.9) == 1);  // a neighbour spinning on one core
  CHECK(threads_for_idle_cores(2, 2.0) == 1);
  CHECK(threads_for_idle_cores(8, 3.2) == 5);
}

TEST_CASE("commands whose threads run batches alone default to every core, without looking", "[threads]") {
  const char* saved = std::getenv("HEED_THREADS");
  const std::string saved_value = saved ? saved : "";
  ::unsetenv("HEED_THREADS");
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const auto start = std::chrono::steady_clock::now();
  set_num_threads(0, ThreadUse::independent_workers);
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK(num_threads() == cores);
  CHECK(took < std::chrono::milliseconds(kBusySampleMs));  // no /proc/stat sample
  set_num_threads(3, ThreadUse::independent_workers);  // an explicit count is kept
  CHECK(num_threads() == 3);
  if (saved) ::setenv("HEED_THREADS", saved_value.c_str(), 1);
  set_num_threads(1);
}
