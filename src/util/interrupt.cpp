#include "util/interrupt.hpp"

#include <unistd.h>
#include <csignal>

#include <atomic>

#include "util/error.hpp"

namespace heed {
namespace {
std::atomic<int> g_signals{0};

extern "C" void on_signal(int sig) {
  if (g_signals.fetch_add(1) >= 1) {
    const char msg[] = "heed: error: interrupted\n";
    ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)ignored;
    _exit(130);
  }
}
}  // namespace

void install_interrupt_handler() {
  // SIGHUP: a closed terminal or ssh session saves the work all the same. A signal the caller
  // ignores (nohup, a background job's SIGINT) stays ignored.
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    std::signal(sig, on_signal);
  }
}

bool interrupted() { return g_signals.load(std::memory_order_relaxed) > 0; }

void throw_if_interrupted() {
  if (interrupted()) throw Interrupted();
}

}  // namespace heed
