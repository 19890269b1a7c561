// The tests' main, with Catch's implementation: compiled once for every test. A test that cannot
// run on this CPU says why through heed_test_skip_reason() (skip_reason.cpp): it then exits with
// 77, which CTest reports as skipped, with the reason.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>

const char* heed_test_skip_reason();

int main(int argc, char** argv) {
  if (const char* why = heed_test_skip_reason()) {
    std::printf("skipped: %s\n", why);
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
