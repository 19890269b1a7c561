// Signals: install_interrupt_handler blocks SIGINT/SIGTERM/SIGHUP in the calling thread and in every
// thread started after it (a signal frame pushed onto a computing thread's stack once corrupted a
// oneDNN kernel's data), keeps an ignored signal ignored, and still turns a signal into interrupted();
// InterruptsDeferred holds throw_if_interrupted() back.
#include <catch2/catch.hpp>

#include <pthread.h>
#include <csignal>

#include <chrono>
#include <thread>

#include "util/error.hpp"
#include "util/interrupt.hpp"

using namespace heed;

namespace {
bool blocked_here(int sig) {
  sigset_t mask;
  pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  return sigismember(&mask, sig) == 1;
}
}  // namespace

TEST_CASE("interrupt handler: signals blocked on computing threads, taken by one thread, ignored stay ignored") {
  std::signal(SIGHUP, SIG_IGN);  // as under nohup
  install_interrupt_handler();

  CHECK(blocked_here(SIGINT));
  CHECK(blocked_here(SIGTERM));
  CHECK_FALSE(blocked_here(SIGHUP));
  bool worker_blocks = false;
  std::thread([&] { worker_blocks = blocked_here(SIGINT) && blocked_here(SIGTERM); }).join();
  CHECK(worker_blocks);

  struct sigaction hup {};
  ::sigaction(SIGHUP, nullptr, &hup);
  CHECK(hup.sa_handler == SIG_IGN);

  REQUIRE_FALSE(interrupted());
  ::kill(::getpid(), SIGTERM);  // process-directed, as `kill` sends it: the process lives on
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!interrupted() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CHECK(interrupted());
  CHECK_THROWS_AS(throw_if_interrupted(), Interrupted);

  // Deferred (nested, and seen from another thread, as OpenMP workers poll): no throw, and the
  // interrupt is still there once the last deferral ends.
  {
    const InterruptsDeferred outer;
    {
      const InterruptsDeferred inner;
      CHECK_NOTHROW(throw_if_interrupted());
    }
    bool worker_threw = false;
    std::thread([&] {
      try {
        throw_if_interrupted();
      } catch (const Interrupted&) {
        worker_threw = true;
      }
    }).join();
    CHECK_FALSE(worker_threw);
    CHECK(interrupted());
  }
  CHECK_THROWS_AS(throw_if_interrupted(), Interrupted);
}
