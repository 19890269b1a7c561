// `-o PATH` of every command that writes a file (translate, tokenizer encode/decode/train,
// average): a regular file is replaced whole and keeps its mode, a symlink's target is written
// and the link kept; a FIFO, a device, /dev/stdout, /dev/fd/1 and bash's `>(cmd)` are written in
// place and stay what they were. Each command's output to a plain new file is the reference. An
// output that is one of the command's inputs (text, model files, tokenizer, a run's metrics) is
// refused.
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include "model_fixture.hpp"
#include "train_fixture.hpp"
#include "util/atomic_file.hpp"

using namespace heed::test;

namespace {

mode_t file_type(const std::string& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode & S_IFMT;
}

mode_t permissions(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

std::string with_output(std::string command, const std::string& output) {
  const size_t at = command.find("OUT");
  REQUIRE(at != std::string::npos);
  return command.replace(at, 3, output);
}

// Runs a bash script (process substitution needs bash), capturing stdout and stderr.
Result run_bash(const TempDir& dir, const std::string& script) {
  const std::string file = dir / "script.sh";
  std::ofstream(file) << script << '\n';
  return run("bash " + file, dir / "bash");
}

// `command` has OUT where its output path goes.
void check_output_kinds(const TempDir& dir, const std::string& command) {
  INFO(command);
  const std::string reference = dir / "reference";
  Result r = run(with_output(command, reference), dir / "ref");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string expected = slurp(reference);
  REQUIRE(!expected.empty());
  auto same = [&](const std::string& got) { return got == expected; };  // no binary bytes in reports

  SECTION("a regular file keeps its mode") {
    const std::string file = dir / "private";
    std::ofstream(file) << "old";
    REQUIRE(::chmod(file.c_str(), 0600) == 0);
    REQUIRE(run(with_output(command, file), dir / "r").exit_code == 0);
    CHECK(same(slurp(file)));
    CHECK(permissions(file) == 0600);
  }
  SECTION("a symlink: its target is written, the link kept") {
    const std::string target = dir / "target", link = dir / "link";
    std::ofstream(target) << "old";
    fs::create_symlink("target", link);
    REQUIRE(run(with_output(command, link), dir / "r").exit_code == 0);
    CHECK(file_type(link) == S_IFLNK);
    CHECK(same(slurp(target)));
  }
  SECTION("a FIFO: the reader gets everything, the FIFO stays") {
    const std::string fifo = dir / "fifo", got = dir / "got";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    r = run_bash(dir, "timeout 60 cat '" + fifo + "' > '" + got + "' & " + with_output(command, fifo) +
                          "; status=$?; wait; exit $status");
    CHECK(r.exit_code == 0);
    CHECK(file_type(fifo) == S_IFIFO);
    CHECK(same(slurp(got)));
  }
  SECTION("/dev/stdout and /dev/fd/1") {
    for (const char* path : {"/dev/stdout", "/dev/fd/1"}) {
      INFO(path);
      r = run(with_output(command, path), dir / "r");
      CHECK(r.exit_code == 0);
      CHECK(same(r.out));
    }
  }
  SECTION("bash's >(cmd)") {
    const std::string got = dir / "got";
    r = run_bash(dir, with_output(command, ">(cat > '" + got + "')") + "; status=$?; wait $!; exit $status");
    CHECK(r.exit_code == 0);
    CHECK(same(slurp(got)));
  }
  SECTION("a character device stays a device") {
    // As root, a private copy of /dev/null (char 1:3): the test never risks the real one.
    std::string device = dir / "null";
    if (::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) device = "/dev/null";
    CHECK(run(with_output(command, device), dir / "r").exit_code == 0);
    CHECK(file_type(device) == S_IFCHR);
  }
  for (const auto& e : fs::directory_iterator(dir.path))  // no temporary file left anywhere
    CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);
}

struct Fixture {
  TempDir dir{"output-paths"};
  std::string model, input, sample = std::string(HEED_TEST_FIXTURES) + "/text/sample.en";
  Fixture() {
    model = make_tiny_model_dir(dir / "model");
    input = dir / "input.txt";
    std::ofstream(input) << "The file was not found.\nDatei nicht gefunden\n";
  }
};

}  // namespace

TEST_CASE("translate -o", "[cli][output]") {
  Fixture f;
  check_output_kinds(f.dir, kHeed + " --threads 1 -q translate --beam 1 -m " + f.model + " -i " + f.input + " -o OUT");
}

TEST_CASE("tokenizer encode -o", "[cli][output]") {
  Fixture f;
  const std::string tok = f.model + "/tokenizer.json";
  check_output_kinds(f.dir, kHeed + " --threads 1 -q tokenizer encode -m " + tok + " -i " + f.sample + " -o OUT");
}

TEST_CASE("tokenizer decode -o", "[cli][output]") {
  Fixture f;
  const std::string tok = f.model + "/tokenizer.json", pieces = f.dir / "pieces.txt";
  REQUIRE(
      run(kHeed + " -q tokenizer encode -m " + tok + " -i " + f.sample + " -o " + pieces, f.dir / "encode").exit_code ==
      0);
  check_output_kinds(f.dir, kHeed + " --threads 1 -q tokenizer decode -m " + tok + " -i " + pieces + " -o OUT");
}

TEST_CASE("tokenizer train -o", "[cli][output]") {
  Fixture f;
  check_output_kinds(f.dir, kHeed + " --threads 1 -q tokenizer train --vocab-size 300 -o OUT " + f.sample);
}

TEST_CASE("average -o", "[cli][output]") {
  Fixture f;
  const std::string weights = f.model + "/model.safetensors";
  check_output_kinds(f.dir, kHeed + " --threads 1 -q average -o OUT " + weights + " " + weights);
}

TEST_CASE("-o naming one of the command's inputs is refused, and the input stays as it was", "[cli][output]") {
  Fixture f;
  const std::string tok = f.model + "/tokenizer.json", text = f.dir / "text.txt", target = f.dir / "target.txt",
                    link = f.dir / "link.txt", checkpoint = f.dir / "checkpoint.safetensors";
  std::ofstream(text) << "The file was not found.\n";
  std::ofstream(target) << "Die Datei wurde nicht gefunden.\n";
  fs::create_symlink(text, link);
  fs::copy_file(f.model + "/model.safetensors", checkpoint);
  const std::string run_dir = f.dir / "run";
  fs::create_directories(run_dir);
  std::ofstream(run_dir + "/metrics.jsonl") << R"({"type": "valid", "step": 5, "elapsed": 1.5, "loss": 3.0})" << '\n';
  const std::string heed = kHeed + " --threads 1 -q ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {heed + "translate -m " + f.model + " -i " + text + " -o " + text, text},
      {heed + "translate -m " + f.model + " -i " + text + " -o " + link, text},  // the same file by another name
      {heed + "tokenizer encode -m " + tok + " -i " + text + " -o " + text, text},
      {heed + "tokenizer train --vocab-size 300 -o " + text + " " + text, text},
      {heed + "average -o " + checkpoint + " " + checkpoint + " " + checkpoint, checkpoint},
      {heed + "score -m " + f.model + " -s " + text + " -t " + target + " -o " + target, target},
      // the files a command reads besides its text: the model's, the tokenizer, a run's metrics
      {heed + "translate -m " + f.model + " -i " + text + " -o " + f.model + "/model.safetensors",
       f.model + "/model.safetensors"},
      {heed + "score -m " + f.model + " -s " + text + " -t " + target + " -o " + tok, tok},
      {heed + "tokenizer encode -m " + tok + " -i " + text + " -o " + tok, tok},
      {heed + "tokenizer decode -m " + tok + " -i " + text + " -o " + tok, tok},
      {heed + "plot " + run_dir + " -o " + run_dir + "/metrics.jsonl", run_dir + "/metrics.jsonl"},
  };
  for (const auto& [command, input] : cases) {
    INFO(command);
    const std::string before = slurp(input);
    const Result r = run(command, f.dir / "same");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(" is also the input ") && Catch::Contains("write the output elsewhere"));
    CHECK(slurp(input) == before);
  }
}
