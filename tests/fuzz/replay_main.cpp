// Without libFuzzer (an ordinary build): a fuzz target's entry point run once on each file named
// on the command line. CTest replays the shipped inputs through every target this way, so the
// targets keep compiling and keep their contract on known inputs in every build, not only in
// scripts/fuzz.sh's clang build.
//
//   TARGET [--all-valid] FILE...
//
// No file is an error (an emptied glob would otherwise pass). With --all-valid the files are the
// project's own valid ones, and the target's reader must accept every one: its invariants are
// then checked on each, not skipped by a reader that refuses everything.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  bool all_valid = false;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--all-valid")
      all_valid = true;
    else
      files.push_back(arg);
  }
  if (files.empty()) {
    std::fprintf(stderr, "no input to replay\n");
    return 1;
  }
  for (const std::string& file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "cannot read %s\n", file.c_str());
      return 1;
    }
    const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("%zu input(s) replayed, %d accepted by the target's reader\n", files.size(), heed::fuzz::accepted_inputs);
  if (all_valid && heed::fuzz::accepted_inputs != static_cast<int>(files.size())) {
    std::fprintf(stderr, "--all-valid: %d of %zu valid inputs accepted\n", heed::fuzz::accepted_inputs, files.size());
    return 1;
  }
  return 0;
}
