// heed translate as a user runs it: pipes and files, line count and order, n-best lists, scores,
// alignments, attention maps, truncation, invalid input and exit codes. The model is a tiny
// random-weight GRU (see model_fixture.hpp): outputs are arbitrary but deterministic.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "model_fixture.hpp"
#include "output_fields.hpp"
#include "resource_bounds.hpp"
#include "util/atomic_file.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kHeed = std::string(HEED_BINARY) + " --threads 1";
const std::string kDir = "translate_cli";  // scratch files, under the test's working directory
const std::string kInput = kDir + "/input.txt";
const std::vector<std::string> kLines = {"The file was not found.", "", "Datei nicht gefunden",
                                         "Calibre can automatically fetch news from a number of websites."};

struct Result {
  int exit_code;
  std::string out, err;
};

Result run(const std::string& command) {
  const std::string out = kDir + "/run.out", err = kDir + "/run.err";
  int status = std::system(("(" + command + ") > " + out + " 2> " + err).c_str());
  Result r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, heed::read_file(out), heed::read_file(err)};
  fs::remove(out);
  fs::remove(err);
  return r;
}

const std::string& model_dir() {
  static const std::string dir = [] {
    fs::remove_all(kDir);
    heed::test::make_tiny_model_dir(kDir + "/model");
    std::string text;
    for (const auto& l : kLines) text += l + "\n";
    heed::write_file_atomic(kInput, text);
    return kDir + "/model";
  }();
  return dir;
}

std::string translate(const std::string& flags) { return kHeed + " --quiet translate -m " + model_dir() + " " + flags; }

using heed::test::split_fields;
using heed::test::split_lines;

}  // namespace

TEST_CASE("translate: one output line per input line, in order, in pipes and files alike", "[cli][translate]") {
  const Result piped = run("cat " + kInput + " | " + translate("--beam 3"));
  REQUIRE(piped.exit_code == 0);
  const auto lines = split_lines(piped.out);
  REQUIRE(lines.size() == kLines.size());
  CHECK(lines[1].empty());
  CHECK_FALSE(lines[0].empty());
  CHECK_FALSE(lines[3].empty());

  REQUIRE(run(translate("--beam 3 -i " + kInput + " -o " + kDir + "/out.txt")).exit_code == 0);
  CHECK(heed::read_file(kDir + "/out.txt") == piped.out);

  // Batching changes nothing; each line alone gives its line of the whole run.
  CHECK(run(translate("--beam 3 --batch-size 1 -i " + kInput)).out == piped.out);
  CHECK(run(translate("--beam 3 --batch-tokens 12 -i " + kInput)).out == piped.out);
  CHECK(run("echo '" + kLines[3] + "' | " + translate("--beam 3")).out == lines[3] + "\n");
}

TEST_CASE("translate --nbest writes K hypotheses per line, best first", "[cli][translate]") {
  const Result r = run(translate("--beam 4 --nbest 4 -i " + kInput));
  REQUIRE(r.exit_code == 0);
  const auto lines = split_lines(r.out);
  REQUIRE(lines.size() == 3 * 4 + 1);  // the empty line gives one empty entry
  const std::string best = split_lines(run(translate("--beam 4 -i " + kInput)).out)[0];
  for (int i : {0, 2, 3}) {
    std::vector<std::string> entries;
    for (const auto& l : lines)
      if (l.rfind(std::to_string(i) + " ||| ", 0) == 0) entries.push_back(l);
    REQUIRE(entries.size() == 4);
    double previous = 1e30;
    for (const auto& e : entries) {
      const auto fields = split_fields(e);
      REQUIRE(fields.size() == 3);
      const double score = std::stod(fields[2]);
      CHECK(score <= previous);
      CHECK(score < 0);
      previous = score;
    }
    // (Distinct token sequences may still decode alike: this random model emits stray byte
    // tokens, all shown as U+FFFD. tests/decode checks that the token sequences differ.)
    if (i == 0) CHECK(split_fields(entries[0])[1] == best);
  }
  CHECK(std::count(lines.begin(), lines.end(), "1 |||  ||| 0.000000") == 1);
}

TEST_CASE("translate --scores (score, log-probability) and --alignment append fields after ' ||| '", "[cli][translate]") {
  const Result r = run(translate("--beam 2 --scores --alignment -i " + kInput));
  REQUIRE(r.exit_code == 0);
  const auto lines = split_lines(r.out);
  const auto plain = split_lines(run(translate("--beam 2 -i " + kInput)).out);
  REQUIRE(lines.size() == kLines.size());
  const std::regex pairs(R"((\d+-\d+( \d+-\d+)*)?)");
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto fields = split_fields(lines[i]);
    REQUIRE(fields.size() == 4);
    CHECK(fields[0] == plain[i]);
    const double score = std::stod(fields[1]), log_prob = std::stod(fields[2]);
    CHECK(log_prob <= score);  // score = log_prob / length (length penalty 1)
    CHECK(std::regex_match(fields[3], pairs));
    if (kLines[i].empty()) {
      CHECK(log_prob == 0);
      continue;
    }
    CHECK(log_prob < 0);
    CHECK_FALSE(fields[3].empty());  // every target word is linked to some source word
    // word indices lie within the source and the output
    std::istringstream in(fields[3]);
    const auto words = [](const std::string& s) {
      std::istringstream w(s);
      return int(std::distance(std::istream_iterator<std::string>(w), {}));
    };
    for (std::string p; in >> p;) {
      const int s = std::stoi(p.substr(0, p.find('-'))), t = std::stoi(p.substr(p.find('-') + 1));
      CHECK(s < words(kLines[i]));
      CHECK(t < words(fields[0]));
    }
  }
}

TEST_CASE("translate --attention-map writes one SVG per non-empty line, named by line number", "[cli][translate]") {
  const std::string maps = kDir + "/maps";
  REQUIRE(run(translate("--beam 2 --attention-map " + maps + " -i " + kInput)).exit_code == 0);
  for (int line : {1, 3, 4}) {
    const std::string svg = heed::read_file(maps + "/" + std::to_string(line) + ".svg");
    CHECK(svg.rfind("<svg", 0) == 0);
    CHECK(svg.find("&lt;/s&gt;") != std::string::npos);
  }
  CHECK_FALSE(fs::exists(maps + "/2.svg"));
  CHECK(std::distance(fs::directory_iterator(maps), fs::directory_iterator()) == 3);
}

TEST_CASE("translate: long lines are truncated with a warning, still one output line each", "[cli][translate]") {
  const Result r = run(kHeed + " translate -m " + model_dir() + " --beam 1 --max-input-length 3 -i " + kInput);
  REQUIRE(r.exit_code == 0);
  CHECK(split_lines(r.out).size() == kLines.size());
  CHECK(r.err.find(kInput + ":1: ") != std::string::npos);
  CHECK(r.err.find(kInput + ":4: ") != std::string::npos);
  CHECK(r.err.find(kInput + ":2: ") == std::string::npos);  // the empty line
  // "Datei nicht gefunden" is also longer than 3 pieces: three lines in all
  CHECK(r.err.find("3 line(s) longer than 3 tokens were truncated") != std::string::npos);
}

TEST_CASE("translate: invalid UTF-8 names the line, and -o leaves the old file untouched", "[cli][translate]") {
  const std::string bad = kDir + "/bad.txt", out = kDir + "/kept.txt";
  heed::write_file_atomic(bad, "fine\nalso fine\nbroken \xC3\x28 here\nfine\n");
  heed::write_file_atomic(out, "old content\n");
  const Result r = run(translate("--beam 1 -i " + bad + " -o " + out));
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("heed: error: " + bad + ":3: invalid UTF-8") != std::string::npos);
  CHECK(heed::read_file(out) == "old content\n");
  for (const auto& entry : fs::directory_iterator(kDir))
    CHECK(entry.path().filename().string().find("kept.txt.tmp") == std::string::npos);
}

TEST_CASE("translate: exit codes", "[cli][translate]") {
  model_dir();
  CHECK(run(kHeed + " translate -m " + kDir + "/no-such-model -i " + kInput).exit_code == 1);
  CHECK(run(translate("-i " + kDir + "/no-such-input")).exit_code == 1);
  CHECK(run(translate("--beam 0 -i " + kInput)).exit_code == 2);
  CHECK(run(translate("--length-penalty -1 -i " + kInput)).exit_code == 2);
  const Result nbest = run(translate("--beam 2 --nbest 3 -i " + kInput));
  CHECK(nbest.exit_code == 2);
  CHECK(nbest.err.find("decoding.nbest 3 needs a beam at least as wide (decoding.beam is 2)") != std::string::npos);
  CHECK(run(kHeed + " translate -i " + kInput).exit_code == 2);  // -m is required
  CHECK(run(translate("--no-such-flag")).exit_code == 2);
}

TEST_CASE("translate: --set decoding.KEY=VALUE and the generated flags set the same field", "[cli][translate]") {
  model_dir();
  const Result by_flag = run(translate("--beam 3 --nbest 2 -i " + kInput));
  const Result by_set = run(translate("--set decoding.beam=3 --set decoding.nbest=2 -i " + kInput));
  REQUIRE(by_flag.exit_code == 0);
  REQUIRE(by_set.exit_code == 0);
  CHECK(by_set.out == by_flag.out);
  CHECK(split_lines(by_set.out).size() == 2 * 3 + 1);  // n-best lines: two per sentence, one for the empty line
  const Result beam8 = run(translate("--set decoding.beam=8 -i " + kInput));
  CHECK(beam8.exit_code == 0);
  CHECK(beam8.out == run(translate("--beam 8 -i " + kInput)).out);
  // A flag overrides the model's config, --set overrides a flag (applied after it).
  CHECK(run(translate("--beam 2 --set decoding.beam=8 -i " + kInput)).out == beam8.out);

  const Result wrong_section = run(translate("--set model.dropout=0.5 -i " + kInput));
  CHECK(wrong_section.exit_code == 2);
  CHECK(wrong_section.err.find("heed translate takes decoding.* fields only") != std::string::npos);
  const Result bad_value = run(translate("--set decoding.beam=0 -i " + kInput));
  CHECK(bad_value.exit_code == 2);
  CHECK(bad_value.err == "heed: error: --set: decoding.beam: got 0, expected an integer >= 1 and <= 1000\n");
  const Result bad_flag = run(translate("--beam 0 -i " + kInput));
  CHECK(bad_flag.err ==
        "heed: error: --beam: got 0, expected an integer >= 1 and <= 1000 (see heed translate --help)\n");
}

TEST_CASE("translate --help lists every decoding field with its default", "[cli][translate]") {
  const Result help = run(kHeed + " translate --help");
  REQUIRE(help.exit_code == 0);
  const std::vector<std::pair<std::string, std::string>> fields = {
      {"--beam", "decoding.beam; default 5"},
      {"--length-penalty", "decoding.length_penalty; default 1.0"},
      {"--max-length-ratio", "decoding.max_length_ratio; default 2.0"},
      {"--max-length-offset", "decoding.max_length_offset; default 10"},
      {"--nbest", "decoding.nbest; default 1"},
      {"--allow-unk", "decoding.allow_unk; default false"},
      {"--batch-size", "decoding.batch_size; default 32"},
      {"--batch-tokens", "decoding.batch_tokens; default 0"},
      {"--max-input-length", "decoding.max_input_length; default 0"}};
  for (const auto& [flag, text] : fields) {
    INFO(flag);
    CHECK(help.out.find(flag) != std::string::npos);
    CHECK(help.out.find(text) != std::string::npos);
  }
  CHECK(help.out.find("--validation-beam") == std::string::npos);  // a training setting
}

TEST_CASE("translate -m with a file instead of a directory says so", "[cli][translate]") {
  const std::string file = model_dir() + "/config.json";
  const Result r = run(kHeed + " translate -m " + file + " -i " + kInput);
  CHECK(r.exit_code == 1);
  CHECK(r.err == "heed: error: " + file +
                     " is not a model directory but a file (give the directory that holds "
                     "config.json, tokenizer.json and model.safetensors)\n");
}

TEST_CASE("translate: a line longer than a Transformer's positions is cut, the others translated", "[cli][translate]") {
  const std::string dir = heed::test::make_tiny_model_dir(kDir + "/transformer", heed::Arch::transformer);
  heed::Config config = heed::load_model_config(dir);  // positions are no parameters: fewer is the same model
  config.model.transformer.max_positions = 24;
  config.data.max_length = 16;
  heed::save_config(config, dir + "/config.json");
  std::string long_line;
  for (int i = 0; i < 200; ++i) long_line += "found ";
  const std::string input = kDir + "/long-transformer.txt";
  heed::write_file_atomic(input, kLines[0] + "\n" + long_line + "\n" + kLines[2] + "\n");

  const Result r = run(kHeed + " translate -m " + dir + " --beam 2 --max-input-length 1000 -i " + input);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto lines = split_lines(r.out);
  REQUIRE(lines.size() == 3);
  CHECK_THAT(r.err, Catch::Contains(input + ":2: ") && Catch::Contains(", only the first 23 are translated (the "
                                                                       "model's max_positions, with </s>)"));
  // the other lines come out as they do alone
  CHECK(run(kHeed + " --quiet translate -m " + dir + " --beam 2 -i " + kInput).out.substr(0, lines[0].size() + 1) ==
        lines[0] + "\n");
}

TEST_CASE("translate: one line's cost is bounded, whatever data.max_length says", "[cli][translate]") {
  // A model whose config lets lines of a million tokens through: a 20,000-token line's search
  // kept 20,000 attention weights per hypothesis and step (8 GB at beam 5). Now it is cut to
  // 4,096 tokens and, without alignments, keeps no attention rows.
  const std::string dir = kDir + "/unbounded";
  fs::create_directories(dir);
  for (const char* file : {"tokenizer.json", "model.safetensors"})
    fs::copy_file(model_dir() + "/" + file, dir + "/" + file, fs::copy_options::overwrite_existing);
  heed::Config config = heed::load_model_config(model_dir());
  config.data.max_length = 1000000;
  heed::save_config(config, dir + "/config.json");
  std::string long_line;
  for (int i = 0; i < 10000; ++i) long_line += "found file ";
  const std::string input = kDir + "/long-gru.txt";
  heed::write_file_atomic(input, long_line + "\n" + kLines[0] + "\n");
  const Result r = run(heed::test::memory_bound(4000) + kHeed + " translate -m " + dir + " --beam 5 -i " + input);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(split_lines(r.out).size() == 2);
  CHECK_THAT(r.err, Catch::Contains(input + ":1: ") &&
                        Catch::Contains(", only the first 4096 are translated (heed's limit for one line)"));
}

TEST_CASE("translate: a config.json describing a model larger than its weights file is refused before it is built",
          "[cli][translate]") {
  const std::string dir = kDir + "/edited-model";
  fs::remove_all(dir);
  fs::copy(model_dir(), dir);
  heed::Config config = heed::load_model_config(dir);
  config.model.gru.enc_hidden = 100000;  // 6e10 parameters, 240 GB of fp32
  heed::save_config(config, dir + "/config.json");
  const Result r = run(kHeed + " translate -m " + dir + " -i " + kInput);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::StartsWith("heed: error: " + dir + "/config.json: describes a model of "));
  CHECK_THAT(r.err, Catch::EndsWith(" bytes) can hold: was config.json edited, or does the file belong to another "
                                    "model?\n"));
  CHECK(r.out.empty());
}

TEST_CASE("translate --attention-map: a run that fails leaves the directory as it was", "[cli][translate]") {
  // A first chunk of 4000 lines is translated (and its pictures drawn) before line 4001 fails.
  std::string text;
  for (int i = 0; i < 4000; ++i) text += "x\n";
  const std::string input = kDir + "/bad-at-4001.txt";
  heed::write_file_atomic(input, text + "\xFF\n");
  const std::string fresh = kDir + "/fresh-maps";
  fs::remove_all(fresh);
  Result r = run(translate("--beam 1 --attention-map " + fresh + " -i " + input + " -o " + kDir + "/maps-out.txt"));
  CHECK(r.exit_code == 1);
  CHECK(r.out.empty());
  CHECK_FALSE(fs::exists(fresh));  // made by the run, removed with it

  const std::string kept = kDir + "/kept-maps";
  fs::remove_all(kept);
  fs::create_directories(kept);
  heed::write_file_atomic(kept + "/1.svg", "an earlier picture");
  heed::write_file_atomic(kept + "/notes.txt", "mine");
  r = run(translate("--beam 1 --attention-map " + kept + " -i " + input + " -o " + kDir + "/maps-out.txt"));
  CHECK(r.exit_code == 1);
  CHECK(heed::read_file(kept + "/1.svg") == "an earlier picture");
  CHECK(std::distance(fs::directory_iterator(kept), fs::directory_iterator()) == 2);  // no staging left behind

  heed::write_file_atomic(input, text);
  r = run(translate("--beam 1 --attention-map " + kept + " -i " + input + " -o " + kDir + "/maps-out.txt"));
  CHECK(r.exit_code == 0);
  CHECK(heed::read_file(kept + "/1.svg").rfind("<svg", 0) == 0);
  CHECK(std::distance(fs::directory_iterator(kept), fs::directory_iterator()) == 4001);
}
