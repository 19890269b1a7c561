#pragma once
// Ctrl-C handling: the first SIGINT/SIGTERM/SIGHUP sets a flag that long work polls so it can stop
// cleanly (the trainer saves a checkpoint); a second one exits at once.
namespace heed {

void install_interrupt_handler();
bool interrupted();
void throw_if_interrupted();  // throws heed::Interrupted

}  // namespace heed
