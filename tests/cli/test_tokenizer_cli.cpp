// heed tokenizer train/encode/decode as a user runs them: pipes, -i/-o files, exit codes, errors.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "util/atomic_file.hpp"
#include "util/text_lines.hpp"
#include "util/utf8.hpp"

namespace {

const std::string kHeed = std::string(HEED_BINARY) + " --threads 1 --quiet";
const std::string kSampleEn = std::string(HEED_TEST_FIXTURES) + "/text/sample.en";
const std::string kSampleDe = std::string(HEED_TEST_FIXTURES) + "/text/sample.de";

struct Result {
  int exit_code;
  std::string out, err;
};

Result run(const std::string& command) {
  const std::string out = "tokenizer_cli.out", err = "tokenizer_cli.err";
  int status = std::system(("(" + command + ") > " + out + " 2> " + err).c_str());
  Result r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, heed::read_file(out), heed::read_file(err)};
  std::remove(out.c_str());
  std::remove(err.c_str());
  return r;
}

// Trained once for all test cases: joint (default) and separate sides.
const std::string& joint_model() {
  static const std::string path = [] {
    std::string p = "tokenizer_cli_joint.json";
    Result r = run(kHeed + " tokenizer train --vocab-size 600 -o " + p + " " + kSampleEn + " " + kSampleDe);
    REQUIRE(r.exit_code == 0);
    return p;
  }();
  return path;
}

}  // namespace

TEST_CASE("encode and decode in a pipe reproduce the text", "[cli]") {
  const std::string m = joint_model();
  Result r = run("printf 'hello world\\n\\n  two  spaces \\n' | " + kHeed + " tokenizer encode -m " + m);
  REQUIRE(r.exit_code == 0);
  // Three lines out; the empty line stays empty; every space is a U+2581 piece start.
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 3);
  CHECK(r.out.find("\n\n") != std::string::npos);
  CHECK(r.out.rfind("\xE2\x96\x81", 0) == 0);

  r = run("printf 'hello world\\n\\n  two  spaces \\n' | " + kHeed + " tokenizer encode -m " + m + " | " + kHeed +
          " tokenizer decode -m " + m);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "hello world\n\n  two  spaces \n");

  r = run("printf 'Datei nicht gefunden\\n' | " + kHeed + " tokenizer encode --ids -m " + m + " | " + kHeed +
          " tokenizer decode --ids -m " + m);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "Datei nicht gefunden\n");
}

TEST_CASE("-i/-o files round trip the whole sample", "[cli]") {
  const std::string m = joint_model();
  REQUIRE(run(kHeed + " tokenizer encode -m " + m + " -i " + kSampleDe + " -o tok_cli.pieces").exit_code == 0);
  REQUIRE(run(kHeed + " tokenizer decode -m " + m + " -i tok_cli.pieces -o tok_cli.text").exit_code == 0);
  CHECK(heed::read_file("tok_cli.text") == heed::read_file(kSampleDe));
  CHECK(heed::count_lines("tok_cli.pieces") == 1004);
  std::remove("tok_cli.pieces");
  std::remove("tok_cli.text");
}

TEST_CASE("invalid UTF-8 is an error naming file and line, or replaced on request", "[cli]") {
  const std::string m = joint_model();
  heed::write_file_atomic("tok_cli_bad.txt", "good line\nstill good\nbad \xFF byte\n");
  Result r = run(kHeed + " tokenizer encode -m " + m + " -i tok_cli_bad.txt");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("heed: error: tok_cli_bad.txt:3: invalid UTF-8") != std::string::npos);

  r = run(kHeed.substr(0, kHeed.size() - 8) + " tokenizer encode --replace-invalid -m " + m + " -i tok_cli_bad.txt | " +
          kHeed + " tokenizer decode -m " + m);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "good line\nstill good\nbad \xEF\xBF\xBD byte\n");
  CHECK(r.err.find("replaced 1 invalid UTF-8 sequence(s) by U+FFFD in 1 line(s)") != std::string::npos);
  std::remove("tok_cli_bad.txt");
}

TEST_CASE("bad decode input and bad flags give clear errors and exit codes", "[cli]") {
  const std::string m = joint_model();
  Result r = run("printf 'ok\\n\\xE2\\x96\\x81nonsensepiece\\n' | " + kHeed + " tokenizer decode -m " + m);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("<stdin>:2: unknown piece") != std::string::npos);

  r = run("printf '5 99999\\n' | " + kHeed + " tokenizer decode --ids -m " + m);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("<stdin>:1: '99999' is not a token id") != std::string::npos);

  r = run(kHeed + " tokenizer encode -m no_such_model.json < /dev/null");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("no_such_model.json") != std::string::npos);

  r = run(kHeed + " tokenizer train --vocab-size 100 -o x.json " + kSampleEn);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("vocabulary size 100 is too small") != std::string::npos);
}

TEST_CASE("separate source and target tokenizers need --side", "[cli]") {
  Result r = run(kHeed + " tokenizer train --vocab-size 400 -o tok_cli_sep.json --source-files " + kSampleEn +
                 " --target-files " + kSampleDe);
  REQUIRE(r.exit_code == 0);
  r = run("printf 'Datei\\n' | " + kHeed + " tokenizer encode -m tok_cli_sep.json");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("choose one with --side source|target") != std::string::npos);
  for (std::string side : {"source", "target"}) {
    r = run("printf 'Datei nicht gefunden\\n' | " + kHeed + " tokenizer encode --side " + side +
            " -m tok_cli_sep.json | " + kHeed + " tokenizer decode --side " + side + " -m tok_cli_sep.json");
    CHECK(r.exit_code == 0);
    CHECK(r.out == "Datei nicht gefunden\n");
  }
  std::remove("tok_cli_sep.json");
}

TEST_CASE("tokenizer: a damaged tokenizer.json's bytes are escaped in the error, never echoed raw",
          "[cli][tokenizer]") {
  const std::string bad = "tokenizer_cli_bad_bytes.json";
  // an invalid UTF-8 byte, then a raw terminal escape sequence (a control character)
  for (const std::string& piece : {std::string("\xC3\x28"), std::string("\x1B[31m")}) {
    heed::write_file_atomic(bad, "{\"format\": \"heed-bpe\", \"version\": 1, \"vocab\": [\"" + piece + "\"]}\n");
    Result r = run("echo hello | " + kHeed + " tokenizer encode -m " + bad);
    CHECK(r.exit_code == 1);
    CHECK(r.err.rfind("heed: error: " + bad + ": corrupt tokenizer: not valid JSON (", 0) == 0);
    if (piece[0] != '\x1B') CHECK(r.err.find("last read: '\"\\xC3(')") != std::string::npos);  // the byte, escaped
    CHECK(heed::find_invalid_utf8(r.err) == std::string::npos);
    CHECK(r.err.find('\x1B') == std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  std::remove(bad.c_str());
}
