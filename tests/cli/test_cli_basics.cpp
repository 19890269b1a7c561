// The heed entry point as a user meets it: help, version, usage errors (exit 2, exactly one
// `heed: error:` line on stderr, nothing on stdout), config show/schema, logging flags.
#include <catch2/catch.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "config/config.hpp"
#include "util/atomic_file.hpp"

namespace {

namespace fs = std::filesystem;
const std::string kHeed = std::string(HEED_BINARY) + " --threads 1";

// A scratch directory for this process, removed at exit.
struct ScratchDir {
  fs::path path = fs::temp_directory_path() / ("heed_test_cli_basics_" + std::to_string(getpid()));
  ScratchDir() { fs::create_directories(path); }
  ~ScratchDir() { std::error_code ignored; fs::remove_all(path, ignored); }
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
  CHECK(r.out == std::string("heed ") + HEED_VERSION + "\n");

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
  check_usage_error("config show --set decoding.beam=0", "--set: decoding.beam: got 0, expected an integer >= 1");
  r = run("config show -c " + (work_dir() / "missing.json").string());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("heed: error: config file: cannot read " + (work_dir() / "missing.json").string()));
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
