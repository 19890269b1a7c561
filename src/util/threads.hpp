#pragma once
// The one place that sets how many threads heed uses (oneDNN's OpenMP and our own loops alike).
// Must be called before any oneDNN primitive is created: a primitive keeps the thread count it
// was created with.
namespace heed {

// More threads than this many per core only wait on each other (and libgomp fails to create
// tens of thousands): a larger request is lowered to it, with a warning.
constexpr int kMaxThreadsPerCore = 4;

// n >= 1: that many threads (the --threads flag). n <= 0: the HEED_THREADS environment variable
// if set (an integer >= 1, else heed::UsageError), else all cores.
void set_num_threads(int n);
int num_threads();

}  // namespace heed
