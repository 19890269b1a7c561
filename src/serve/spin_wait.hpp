#pragma once
// Waiting a little before sleeping. In a virtual machine an idle CPU halts (an exit to the host),
// and the thread woken on it later runs on a CPU that must first be resumed: for a lone request
// that is two wake-ups (its sentence to a worker, the translation back), each costing more than
// polling for it would. So the server's waits that usually end within a millisecond or two poll
// first, yielding to any other thread that wants the CPU, and sleep only when the wait is long.
#include <chrono>
#include <thread>

namespace heed::serve {

// Polls `ready` (called without any lock held) until it returns true or `limit` has passed;
// returns its last answer. A limit of zero polls once.
template <typename Ready>
bool spin_until(Ready&& ready, std::chrono::microseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (ready()) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::yield();
  }
}

}  // namespace heed::serve
