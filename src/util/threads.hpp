#pragma once
// The one place that sets how many threads heed uses (oneDNN's OpenMP and our own loops alike).
// Must be called before any oneDNN primitive is created: a primitive keeps the thread count it
// was created with.
#include <string>

namespace heed {

// More threads than this many per core only wait on each other (and libgomp fails to create
// tens of thousands): a larger request is lowered to it, with a warning.
constexpr int kMaxThreadsPerCore = 4;

// How long an OpenMP thread that waits (at a barrier, for the next parallel region) spins before
// it sleeps, as GOMP_SPINCOUNT (libgomp's unit, about 10 ns). libgomp's own default, 300000, is
// about 3 ms: on a machine where anything else runs, a waiting thread burns its core while the
// thread it waits for is descheduled, and a 2-thread run fell to a quarter of its speed alone.
// Bounded at about 0.1 ms, waiting threads still catch back-to-back regions (the speed alone)
// and yield the core soon when it is contended.
constexpr const char* kSpinCountSetting = "GOMP_SPINCOUNT=10000";

// libgomp reads GOMP_SPINCOUNT and OMP_WAIT_POLICY once, when it is loaded, before main(); so
// when neither is set, heed sets kSpinCountSetting and executes itself again
// (/proc/self/exe, same arguments) before any library starts. Called from the executable's
// .preinit_array (src/main.cpp), with the process's own argv and environment; uses libc only.
// Returns (and heed runs with libgomp's defaults) when the re-execution fails.
void restart_with_bounded_spin(char** argv, char** envp);

// How a command's threads work together; it decides the default thread count.
enum class ThreadUse {
  // Threads split each product and meet at barriers (training): one thread descheduled by other
  // work stalls the rest, so the default leaves the cores that are busy elsewhere alone.
  shared_products,
  // Each thread runs whole batches alone (translate, serve): a descheduled thread delays only its
  // own batch, so the default is every core, and no time is spent looking at the machine.
  independent_workers,
};

// n >= 1: that many threads (the --threads flag). n <= 0: the HEED_THREADS environment variable
// if set (an integer >= 1, else heed::UsageError), else under mpirun the cores divided among the
// job's processes on this machine, else for independent_workers every core, else the cores that
// are not busy with other work when heed starts (at least one): it looks at /proc/stat for
// kBusySampleMs. Two threads with one of them waiting on a descheduled sibling ran at a quarter of
// one thread's speed.
void set_num_threads(int n, ThreadUse use = ThreadUse::shared_products);
constexpr int kBusySampleMs = 50;
int num_threads();

// Cores kept busy between two readings of /proc/stat (the "cpu" line: user nice system idle
// iowait irq softirq steal ...), out of `cores`: 0 when either reading lacks the line.
double busy_cores(const std::string& stat_before, const std::string& stat_after, int cores);
// The default thread count: the cores minus those busy elsewhere (rounded), at least one.
int threads_for_idle_cores(int cores, double busy);

}  // namespace heed
