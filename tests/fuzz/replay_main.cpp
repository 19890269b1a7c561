// Without libFuzzer (an ordinary build): a fuzz target's entry point run once on each file named
// on the command line. CTest replays the shipped inputs through every target this way, so the
// targets keep compiling and keep their contract on known inputs in every build, not only in
// scripts/fuzz.sh's clang build.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "cannot read %s\n", argv[i]);
      return 1;
    }
    const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("%d input(s) replayed\n", argc - 1);
  return 0;
}
