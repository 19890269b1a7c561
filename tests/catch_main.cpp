// The tests' main, with Catch's implementation: compiled once for every test. A test that cannot
// run on this CPU links an object defining heed_test_skip_reason() (needs_bf16.cpp, for the tests
// whose file name ends in _bf16): it then exits with 77, which CTest reports as skipped, saying
// why. Every other test gets the weak definition here: nothing stops it.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>

__attribute__((weak)) const char* heed_test_skip_reason() { return nullptr; }

int main(int argc, char** argv) {
  if (const char* why = heed_test_skip_reason()) {
    std::printf("skipped: %s\n", why);
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
