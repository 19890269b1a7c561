#include "cli/registry.hpp"
#include "util/threads.hpp"

namespace {
// Runs before any shared library's initialiser, so before libgomp reads its settings (see
// heed::restart_with_bounded_spin).
void before_libraries(int, char** argv, char** envp) { heed::restart_with_bounded_spin(argv, envp); }
__attribute__((section(".preinit_array"), used)) void (*const preinit)(int, char**, char**) = before_libraries;
}  // namespace

int main(int argc, char** argv) { return heed::cli::run(argc, argv); }
