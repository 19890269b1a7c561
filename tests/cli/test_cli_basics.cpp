// The heed entry point as a user meets it: help, version, usage errors (exit 2, exactly one
// `heed: error:` line on stderr, nothing on stdout), config show/schema, logging flags.
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "config/config.hpp"
#include "util/atomic_file.hpp"

namespace {

namespace fs = std::filesystem;
const std::string kHeed = std::string(HEED_BINARY) + " --threads 1";

// A scratch directory for this process, removed at exit.
struct ScratchDir {
  fs::path path = fs::temp_directory_path() / ("heed_test_cli_basics_" + std::to_string(getpid()));
  ScratchDir() { fs::create_directories(path); }
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

fs::path work_dir() {
  static ScratchDir dir;
  return dir.path;
}

struct Result {
  int exit_code;
  std::string out, err;
};

Result run(const std::string& args) {
  const std::string out = (work_dir() / "out").string(), err = (work_dir() / "err").string();
  int status = std::system((kHeed + " " + args + " > " + out + " 2> " + err).c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, heed::read_file(out), heed::read_file(err)};
}

std::string write_file(const std::string& name, const std::string& text) {
  auto path = (work_dir() / name).string();
  std::ofstream(path) << text;
  return path;
}

// A usage error: exit 2, nothing on stdout, exactly this one line on stderr.
void check_usage_error(const std::string& args, const std::string& message) {
  INFO("heed " << args);
  Result r = run(args);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "heed: error: " + message + "\n");
}

}  // namespace

TEST_CASE("--help and --version", "[cli]") {
  Result r = run("--help");
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK_THAT(r.out, Catch::Contains("Usage: heed [OPTIONS] SUBCOMMAND"));
  CHECK_THAT(r.out, Catch::Contains("--log-level"));
  CHECK_THAT(r.out, Catch::Contains("config "));

  r = run("--version");
  CHECK(r.exit_code == 0);
  // and whether this build trains over MPI
  CHECK_THAT(r.out, Catch::Matches(std::string("heed ") + HEED_VERSION +
                                   " \\((MPI: Open MPI v[0-9.]+|built without MPI)\\)\n"));

  r = run("config show --help");  // each subcommand has its own help
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("Usage: heed config show [OPTIONS]"));
  CHECK_THAT(r.out, Catch::Contains("--set"));
}

TEST_CASE("unknown subcommands and options name the offending argument", "[cli]") {
  check_usage_error("nope", "unknown subcommand 'nope' (see heed --help)");
  check_usage_error("--bad", "unknown option '--bad' (see heed --help)");
  check_usage_error("--bad=3", "unknown option '--bad' (see heed --help)");
  check_usage_error("", "missing subcommand (see heed --help)");
  check_usage_error("config nope", "unknown subcommand 'nope' (see heed config --help)");
  check_usage_error("config show --bad", "unknown option '--bad' (see heed config show --help)");
  check_usage_error("config show stray", "unexpected argument 'stray' (see heed config show --help)");
  check_usage_error("--log-level loud config schema",
                    "--log-level: unknown level 'loud' (allowed: trace, debug, info, warn, error)");
}

TEST_CASE("config errors exit 2 with one line naming the file and the field", "[cli]") {
  auto typo = write_file("typo.json", R"({"training": {"lerning_rate": 0.1}})");
  check_usage_error("config show -c " + typo,
                    typo + ": unknown key 'training.lerning_rate' (did you mean training.learning_rate?)");
  auto broken = write_file("broken.json", "{\n  \"seed\": 1,,\n}");
  Result r = run("config show -c " + broken);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("heed: error: " + broken + ":2:13: syntax error"));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  check_usage_error("config show --set decoding.beam=0",
                    "--set: decoding.beam: got 0, expected an integer >= 1 and <= 1000");
  r = run("config show -c " + (work_dir() / "missing.json").string());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err,
             Catch::StartsWith("heed: error: config file: cannot read " + (work_dir() / "missing.json").string()));
}

TEST_CASE("config show prints the effective config; config schema the schema", "[cli]") {
  auto file = write_file("ok.json", R"({"training": {"batch_tokens": 500}})");
  Result r = run("config show -c " + file + " --set training.learning_rate=0.0005 --set model.arch=transformer");
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  heed::Config expected = heed::default_config();
  expected.training.batch_tokens = 500;
  expected.training.learning_rate = 0.0005f;
  expected.model.arch = heed::Arch::transformer;
  CHECK(heed::config_from_json(nlohmann::json::parse(r.out), "stdout") == expected);

  r = run("config schema");
  REQUIRE(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out) == heed::config_schema());
}

TEST_CASE("logs go to stderr with time stamps, and to --log-file; --quiet silences them", "[cli]") {
  Result r = run("--log-level debug config show");
  REQUIRE(r.exit_code == 0);
  // [2024-01-31 12:34:56] [debug] effective config from defaults with 0 override(s)
  CHECK(r.err.size() > 22);
  CHECK(r.err[0] == '[');
  CHECK(r.err.substr(21, 10) == " [debug] e");
  CHECK_THAT(r.err, Catch::Contains("effective config from defaults"));
  CHECK(r.out.find("[debug]") == std::string::npos);  // results only on stdout

  auto log = (work_dir() / "heed.log").string();
  r = run("--log-level debug --log-file " + log + " config show");
  CHECK(heed::read_file(log) == r.err);

  r = run("config show");  // default level is info: this debug line is not shown
  CHECK(r.err.empty());
  r = run("--log-level debug --quiet config show");
  CHECK(r.err.empty());
  // A log file below a regular file cannot be created.
  auto under_file = (fs::path(write_file("plain", "")) / "x.log").string();
  check_usage_error("--log-file " + under_file + " config show", "--log-file: cannot open " + under_file);
}

namespace {
// Runs heed with stdout sent to `target` (a redirection such as "> /dev/full"); stderr captured.
Result run_stdout_to(const std::string& args, const std::string& target) {
  const std::string err = (work_dir() / "err").string();
  int status = std::system((kHeed + " " + args + " " + target + " 2> " + err).c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, "", heed::read_file(err)};
}
}  // namespace

TEST_CASE("results that cannot be written to stdout are an error, exit 1", "[cli]") {
  auto ref = write_file("ref.txt", "the cat sat on the mat\n");
  for (const std::string& args : {std::string("config show"), std::string("config schema"),
                                  "bleu " + ref + " -i " + ref, "bleu " + ref + " -i " + ref + " -m chrf ter"}) {
    INFO(args);
    Result r = run_stdout_to(args, "> /dev/full");
    CHECK(r.exit_code == 1);
    CHECK(r.err == "heed: error: cannot write to standard output: No space left on device\n");
    r = run_stdout_to(args, ">&-");
    CHECK(r.exit_code == 1);
    CHECK(r.err == "heed: error: cannot write to standard output: Bad file descriptor\n");
  }
}

TEST_CASE("--threads and HEED_THREADS: an integer >= 1; far too many are lowered, with a warning", "[cli]") {
  const std::string err = (work_dir() / "err").string();
  for (const char* value : {"-1", "0", "many"}) {
    INFO(value);
    const int status = std::system(
        (std::string(HEED_BINARY) + " --threads " + value + " config schema > /dev/null 2> " + err).c_str());
    CHECK(WEXITSTATUS(status) == 2);
    CHECK(heed::read_file(err) == "heed: error: --threads: got " + std::string(value) +
                                      ", expected an integer >= 1 (see heed config schema --help)\n");
  }
  for (const char* value : {"abc", "0", "-2", "4x"}) {
    INFO(value);
    const int status = std::system(
        ("HEED_THREADS=" + std::string(value) + " " + HEED_BINARY + " config schema > /dev/null 2> " + err).c_str());
    CHECK(WEXITSTATUS(status) == 2);
    CHECK(heed::read_file(err) ==
          "heed: error: HEED_THREADS: got " + std::string(value) + ", expected an integer >= 1\n");
  }
  // 100000 threads crashed inside OpenMP: tokenizer encode runs a parallel loop with them.
  auto text = write_file("threads.txt", "some words to encode\nand some more\n");
  auto tokenizer = (work_dir() / "threads-tokenizer.json").string();
  REQUIRE(run("tokenizer train --vocab-size 280 -o " + tokenizer + " " + text).exit_code == 0);
  const int cores = std::max(1, int(std::thread::hardware_concurrency()));
  const std::string many =
      std::string(HEED_BINARY) + " --threads 100000 tokenizer encode -m " + tokenizer + " -i " + text;
  const int status = std::system((many + " > " + (work_dir() / "many.out").string() + " 2> " + err).c_str());
  const std::string warning = heed::read_file(err);
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(heed::read_file((work_dir() / "many.out").string()) ==
        run("tokenizer encode -m " + tokenizer + " -i " + text).out);
  CHECK_THAT(warning, Catch::EndsWith("[warning] --threads 100000: more than 4 threads per core on " +
                                      std::to_string(cores) + " core(s); using " + std::to_string(4 * cores) + "\n"));
}

TEST_CASE("out-of-range flags name the flag, the value and the range", "[cli]") {
  check_usage_error("translate -m nowhere --beam 0",
                    "--beam: got 0, expected an integer >= 1 and <= 1000 (see heed translate --help)");
  // Past int's range, these wrapped: 2 * beam overflowed, and the length limit went negative
  // (every translation empty, exit 0).
  check_usage_error("translate -m nowhere --beam 1073741824",
                    "--beam: got 1073741824, expected an integer >= 1 and <= 1000 (see heed translate --help)");
  check_usage_error(
      "translate -m nowhere --max-length-offset 2147483647",
      "--max-length-offset: got 2147483647, expected an integer >= 0 and <= 8192 (see heed translate --help)");
  check_usage_error("translate -m nowhere --max-length-ratio 1000",
                    "--max-length-ratio: got 1000, expected a number > 0 and <= 100 (see heed translate --help)");
  check_usage_error("translate -m nowhere --nbest 5000",
                    "--nbest: got 5000, expected an integer >= 1 and <= 1000 (see heed translate --help)");
  check_usage_error("translate -m nowhere --max-length-ratio 0",
                    "--max-length-ratio: got 0, expected a number > 0 and <= 100 (see heed translate --help)");
  check_usage_error("translate -m nowhere --length-penalty -1",
                    "--length-penalty: got -1, expected a number >= 0 (see heed translate --help)");
  check_usage_error(
      "translate -m nowhere --max-input-length 100000000",
      "--max-input-length: got 100000000, expected an integer >= 0 and <= 4096 (see heed translate --help)");
  check_usage_error(
      "tokenizer train --max-piece-length 1 -o x.json x.txt",
      "--max-piece-length: got 1, expected an integer from 2 to 1048576 (see heed tokenizer train --help)");
  check_usage_error("bleu ref.txt --smooth-value -1",
                    "--smooth-value: got -1, expected a number >= 0 (see heed bleu --help)");
  check_usage_error("config show --set tokenizer.vocab_size=260",
                    "--set: tokenizer.vocab_size: got 260, expected an integer >= 261");
}

TEST_CASE("a log file that cannot be written is an error at the end, exit 1", "[cli]") {
  Result r = run("--log-level debug --log-file /dev/full config show");
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::EndsWith("\nheed: error: cannot write the log file /dev/full: No space left on device\n"));
  CHECK(r.err.find("LOG ERROR") == std::string::npos);       // spdlog's own complaint
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 2);  // the debug line (on stderr still) and the error
}

TEST_CASE("OpenMP's waiting threads spin briefly unless the user chose a wait policy", "[cli]") {
  // libgomp reads its settings once, when it is loaded, and prints them on OMP_DISPLAY_ENV.
  const std::string err = (work_dir() / "err").string();
  auto settings = [&](const std::string& environment) {
    std::system(
        (environment + " OMP_DISPLAY_ENV=verbose " + HEED_BINARY + " config schema > /dev/null 2> " + err).c_str());
    return heed::read_file(err);
  };
  CHECK_THAT(settings("env -u GOMP_SPINCOUNT -u OMP_WAIT_POLICY"), Catch::Contains("GOMP_SPINCOUNT = '10000'"));
  CHECK_THAT(settings("GOMP_SPINCOUNT=77"), Catch::Contains("GOMP_SPINCOUNT = '77'"));
  const std::string passive = settings("env -u GOMP_SPINCOUNT OMP_WAIT_POLICY=passive");
  CHECK_THAT(passive, Catch::Contains("OMP_WAIT_POLICY = 'PASSIVE'"));
  CHECK_THAT(passive, Catch::Contains("GOMP_SPINCOUNT = '0'"));
}
