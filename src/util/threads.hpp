#pragma once
// The one place that sets how many threads heed uses (oneDNN's OpenMP and our own loops alike).
// Must be called before any oneDNN primitive is created: a primitive keeps the thread count it
// was created with.
namespace heed {

// n <= 0 means: the HEED_THREADS environment variable if set, else all cores.
void set_num_threads(int n);
int num_threads();

}  // namespace heed
