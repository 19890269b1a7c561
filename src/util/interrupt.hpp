#pragma once
// Ctrl-C handling: the first SIGINT/SIGTERM/SIGHUP sets a flag that long work polls so it can stop
// cleanly (the trainer saves a checkpoint); a second one exits at once.
namespace heed {

void install_interrupt_handler();
bool interrupted();
void throw_if_interrupted();  // throws heed::Interrupted, unless deferred

// While one lives (in any thread), throw_if_interrupted() lets the work go on; interrupted()
// still tells. For work that every process of a data-parallel run must finish together (a
// sharded validation ends in all-reduces: a process leaving it alone would leave the others
// waiting there for ever).
class InterruptsDeferred {
 public:
  InterruptsDeferred();
  ~InterruptsDeferred();
  InterruptsDeferred(const InterruptsDeferred&) = delete;
  InterruptsDeferred& operator=(const InterruptsDeferred&) = delete;
};

}  // namespace heed
