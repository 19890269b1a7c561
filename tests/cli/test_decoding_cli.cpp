// The decoding features of heed translate and heed score as a user runs them: ensembles (-m
// repeated), --prefix, --sampling, and forced scores. The models are tiny random-weight ones
// (model_fixture.hpp): outputs are arbitrary but deterministic. tests/decode checks the numbers
// against hand computations; this checks the wiring, the formats and the errors.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "model_fixture.hpp"
#include "output_fields.hpp"
#include "util/atomic_file.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kHeed = std::string(HEED_BINARY) + " --threads 1 --quiet";
const std::string kDir = "decoding_cli";
const std::vector<std::string> kLines = {"The file was not found.", "", "Datei nicht gefunden",
                                         "Calibre can automatically fetch news from a number of websites."};

struct Result {
  int exit_code;
  std::string out, err;
};

Result run(const std::string& command) {
  const std::string out = kDir + "/run.out", err = kDir + "/run.err";
  const int status = std::system(("(" + command + ") > " + out + " 2> " + err).c_str());
  Result r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, heed::read_file(out), heed::read_file(err)};
  fs::remove(out);
  fs::remove(err);
  return r;
}

std::string write_lines(const std::string& name, const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  heed::write_file_atomic(kDir + "/" + name, text);
  return kDir + "/" + name;
}

struct Models {
  std::string gru, transformer, other_vocab, input;
};

const Models& models() {
  static const Models m = [] {
    fs::remove_all(kDir);
    Models out;
    out.gru = heed::test::make_tiny_model_dir(kDir + "/gru");
    out.transformer = heed::test::make_tiny_model_dir(kDir + "/transformer", heed::Arch::transformer);
    out.other_vocab = heed::test::make_tiny_model_dir(kDir + "/other", heed::Arch::gru_bahdanau, 420);
    out.input = write_lines("input.txt", kLines);
    return out;
  }();
  return m;
}

using heed::test::split_fields;
using heed::test::split_lines;

}  // namespace

TEST_CASE("translate -m A -m B: an ensemble; a model with itself translates as the model alone", "[cli][ensemble]") {
  const Models& m = models();
  const Result alone = run(kHeed + " translate -m " + m.gru + " --scores -i " + m.input);
  const Result twice = run(kHeed + " translate -m " + m.gru + " -m " + m.gru + " --scores -i " + m.input);
  REQUIRE(alone.exit_code == 0);
  REQUIRE(twice.exit_code == 0);
  const auto a = split_lines(alone.out), b = split_lines(twice.out);
  REQUIRE(a.size() == kLines.size());
  REQUIRE(b.size() == kLines.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const auto fa = split_fields(a[i]), fb = split_fields(b[i]);
    REQUIRE(fa.size() == 3);
    REQUIRE(fb.size() == 3);
    CHECK(fa[0] == fb[0]);
    CHECK(std::stod(fa[2]) == Approx(std::stod(fb[2])).margin(1e-3));
  }
  // Two different architectures: n-best lists, beams and batches as for one model.
  const Result mixed = run(kHeed + " translate -m " + m.gru + " -m " + m.transformer +
                           " --beam 3 --nbest 2 --batch-size 1 -i " + m.input);
  INFO(mixed.err);
  REQUIRE(mixed.exit_code == 0);
  CHECK(split_lines(mixed.out).size() == 3 * 2 + 1);
  // Other batches: the same hypotheses, scores to float rounding.
  const auto batched = split_lines(
      run(kHeed + " translate -m " + m.gru + " -m " + m.transformer + " --beam 3 --nbest 2 -i " + m.input).out);
  const auto one_by_one = split_lines(mixed.out);
  REQUIRE(batched.size() == one_by_one.size());
  for (size_t i = 0; i < batched.size(); ++i) {
    const auto x = split_fields(batched[i]), y = split_fields(one_by_one[i]);
    REQUIRE(x.size() == 3);
    REQUIRE(y.size() == 3);
    CHECK(x[1] == y[1]);
    CHECK(std::stod(x[2]) == Approx(std::stod(y[2])).margin(1e-5));
  }
  CHECK(mixed.out != run(kHeed + " translate -m " + m.gru + " --beam 3 --nbest 2 -i " + m.input).out);

  const Result other = run(kHeed + " translate -m " + m.gru + " -m " + m.other_vocab + " -i " + m.input);
  CHECK(other.exit_code == 2);
  CHECK(other.err.find("-m " + m.other_vocab + ": its target tokenizer differs from that of -m " + m.gru) !=
        std::string::npos);
  CHECK(other.out.empty());
}

TEST_CASE("translate --prefix: each translation starts with its line's prefix", "[cli][prefix]") {
  const Models& m = models();
  const std::string prefixes = write_lines("prefix.txt", {"Die Datei", "Das", "", "Calibre kann"});
  for (const std::string& model : {m.gru, m.transformer}) {
    const Result r = run(kHeed + " translate -m " + model + " --beam 3 --nbest 3 --prefix " + prefixes + " -i " + m.input);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto lines = split_lines(r.out);
    REQUIRE(lines.size() == 3 * 3 + 1);
    // Without a prefix, a line gets what it gets without --prefix (its beam's rows are batched
    // with other rows, so scores may differ in the last bits).
    const auto plain = split_lines(run(kHeed + " translate -m " + model + " --beam 3 --nbest 3 -i " + m.input).out);
    REQUIRE(plain.size() == lines.size());
    for (size_t i = 0; i < lines.size(); ++i) {
      const auto fields = split_fields(lines[i]);
      REQUIRE(fields.size() == 3);
      if (fields[0] == "0") CHECK(fields[1].rfind("Die Datei", 0) == 0);
      if (fields[0] == "1") CHECK(fields[1].empty());  // an empty input stays empty, prefix or not
      if (fields[0] == "2") {
        const auto expected = split_fields(plain[i]);
        CHECK(fields[1] == expected[1]);
        CHECK(std::stod(fields[2]) == Approx(std::stod(expected[2])).margin(1e-5));
      }
      if (fields[0] == "3") CHECK(fields[1].rfind("Calibre kann", 0) == 0);
    }
  }
  // One prefix per input line, else one clear error and no output file.
  const std::string short_prefixes = write_lines("short-prefix.txt", {"Die Datei", ""});
  const Result r = run(kHeed + " translate -m " + m.gru + " --prefix " + short_prefixes + " -i " + m.input + " -o " +
                       kDir + "/prefixed.txt");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("--prefix " + short_prefixes + ": ends after line 2, but " + m.input + " has more lines") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(kDir + "/prefixed.txt"));
  // A prefix longer than the model's target positions hold: an error naming its line, not a
  // translation cut at the limit that does not start with it.
  std::string words;
  for (int i = 0; i < 1100; ++i) words += "a ";
  const std::string huge_prefix = write_lines("huge-prefix.txt", {"", "", words, ""});
  const Result huge = run(kHeed + " translate -m " + m.transformer + " --prefix " + huge_prefix + " -i " + m.input);
  CHECK(huge.exit_code == 1);
  CHECK_THAT(huge.err, Catch::Contains("--prefix " + huge_prefix + ":3: ") &&
                           Catch::Contains("tokens, more than the model's 1024 target positions hold before </s>"));
  const std::string long_prefixes = write_lines("long-prefix.txt", {"a", "b", "c", "d", "e"});
  const Result extra = run(kHeed + " translate -m " + m.gru + " --prefix " + long_prefixes + " -i " + m.input);
  CHECK(extra.exit_code == 1);
  CHECK(extra.err.find("has more lines than") != std::string::npos);
}

TEST_CASE("translate --sampling: n samples per line, reproducible for a seed whatever the batching and threads",
          "[cli][sampling]") {
  const Models& m = models();
  const std::string base = kHeed + " translate -m " + m.gru + " -i " + m.input + " --sampling topk:20 --nbest 7";
  const Result r = run(base + " --sampling-seed 5");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto lines = split_lines(r.out);
  REQUIRE(lines.size() == 3 * 7 + 1);  // nbest may exceed the beam (5) when sampling
  CHECK(run(base + " --sampling-seed 5").out == r.out);
  CHECK(run(base + " --sampling-seed 5 --batch-size 1").out == r.out);
  CHECK(run(std::string(HEED_BINARY) + " --threads 2 --quiet translate -m " + m.gru + " -i " + m.input +
            " --sampling topk:20 --nbest 7 --sampling-seed 5")
            .out == r.out);
  CHECK(run(base + " --sampling-seed 6").out != r.out);
  // a line's samples are seeded by its line number: the same line elsewhere draws others
  const std::string repeated = write_lines("repeated.txt", {kLines[0], kLines[0]});
  const auto samples = split_lines(run(kHeed + " translate -m " + m.gru + " -i " + repeated +
                                       " --sampling full --nbest 3 --sampling-seed 5")
                                       .out);
  REQUIRE(samples.size() == 6);
  CHECK(split_fields(samples[0])[1] != split_fields(samples[3])[1]);
  // greedy-like sampling (topk:1) is greedy search
  CHECK(run(kHeed + " translate -m " + m.gru + " -i " + m.input + " --sampling topk:1").out ==
        run(kHeed + " translate -m " + m.gru + " -i " + m.input + " --beam 1").out);

  const Result bad = run(base + " --sampling top3");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--sampling") != std::string::npos);
  CHECK(bad.err.find("\"topk:K\"") != std::string::npos);
  const Result cold = run(base + " --temperature 0");
  CHECK(cold.exit_code == 2);
  CHECK(cold.err.find("--temperature") != std::string::npos);
}

TEST_CASE("heed score: forced log-probabilities per line pair, per token with --tokens", "[cli][score]") {
  const Models& m = models();
  const std::string targets = write_lines("targets.txt", {"Die Datei wurde nicht gefunden.", "Hallo",
                                                          "File not found", "Calibre kann Nachrichten holen."});
  const Result r = run(kHeed + " score -m " + m.transformer + " -s " + m.input + " -t " + targets + " --tokens");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto lines = split_lines(r.out);
  REQUIRE(lines.size() == kLines.size());
  for (const auto& line : lines) {
    const auto fields = split_fields(line);
    REQUIRE(fields.size() == 3);
    const double log_prob = std::stod(fields[0]), score = std::stod(fields[1]);
    CHECK(log_prob < 0);
    std::istringstream tokens(fields[2]);
    double sum = 0;
    int count = 0;
    std::string last;
    for (std::string t; tokens >> t; ++count) {
      sum += std::stod(t.substr(t.rfind('=') + 1));
      last = t.substr(0, t.rfind('='));
    }
    CHECK(last == "</s>");
    CHECK(sum == Approx(log_prob).margin(1e-5 * count + 1e-5));
    CHECK(score == Approx(log_prob / count).margin(1e-5));  // length penalty 1: per token, </s> included
  }
  // the same pairs without --tokens, in another batching; an ensemble of the model with itself
  const Result plain = run(kHeed + " score -m " + m.transformer + " -s " + m.input + " -t " + targets +
                           " --batch-size 1 --length-penalty 0");
  const Result twice = run(kHeed + " score -m " + m.transformer + " -m " + m.transformer + " -s " + m.input + " -t " +
                           targets + " -o " + kDir + "/scores.txt");
  REQUIRE(plain.exit_code == 0);
  REQUIRE(twice.exit_code == 0);
  const auto p = split_lines(plain.out), e = split_lines(heed::read_file(kDir + "/scores.txt"));
  REQUIRE(p.size() == lines.size());
  REQUIRE(e.size() == lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    const double expected = std::stod(split_fields(lines[i])[0]);
    CHECK(std::stod(split_fields(p[i])[0]) == Approx(expected).margin(1e-4));
    CHECK(std::stod(split_fields(p[i])[1]) == std::stod(split_fields(p[i])[0]));  // alpha 0: the sum
    CHECK(std::stod(split_fields(e[i])[0]) == Approx(expected).margin(1e-4));
  }
}

TEST_CASE("heed score: unaligned files and over-long lines are errors, never cut", "[cli][score]") {
  const Models& m = models();
  const std::string three = write_lines("three.txt", {"a", "b", "c"});
  const Result r = run(kHeed + " score -m " + m.gru + " -s " + m.input + " -t " + three + " -o " + kDir + "/s.txt");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find(three + " ends after line 3, but " + m.input + " has more lines") != std::string::npos);
  CHECK_FALSE(fs::exists(kDir + "/s.txt"));

  std::string long_line;
  for (int i = 0; i < 1100; ++i) long_line += "x ";
  const std::string sources = write_lines("long-src.txt", {"a", "b"});
  const std::string long_targets = write_lines("long-tgt.txt", {"a", long_line});
  const Result long_r = run(kHeed + " score -m " + m.transformer + " -s " + sources + " -t " + long_targets);
  CHECK(long_r.exit_code == 1);
  CHECK(long_r.err.find(long_targets + ":2: ") != std::string::npos);
  CHECK(long_r.err.find("the model scores at most 1023") != std::string::npos);

  // Standard input named twice: the two readers took alternate lines, half the pairs, exit 0.
  const Result both = run("printf 'a\\nb\\nc\\nd\\n' | " + kHeed + " score -m " + m.gru + " -s - -t -");
  CHECK(both.exit_code == 2);
  CHECK_THAT(both.err, Catch::Contains("-s and -t both read standard input; give one of them as a file"));
  const Result prefix_too = run("printf 'a\\n' | " + kHeed + " translate -m " + m.gru + " --prefix - -i -");
  CHECK(prefix_too.exit_code == 2);
  CHECK_THAT(prefix_too.err, Catch::Contains("-i and --prefix both read standard input"));
  const Result bleu_both = run("printf 'a\\n' | " + kHeed + " bleu -");  // the hypothesis defaults to stdin
  CHECK(bleu_both.exit_code == 2);
  CHECK_THAT(bleu_both.err, Catch::Contains("-i and the reference '-' both read standard input"));
}

TEST_CASE("heed quantize writes an int8 model directory that translate detects", "[cli][int8]") {
  const Models& m = models();
  const std::string int8 = kDir + "/gru-int8";
  fs::remove_all(int8);
  const Result q = run(std::string(HEED_BINARY) + " --threads 1 quantize -m " + m.gru + " -o " + int8);
  INFO(q.err);
  REQUIRE(q.exit_code == 0);
  CHECK(q.err.find("to int8; model.safetensors") != std::string::npos);
  for (const char* file : {"config.json", "tokenizer.json", "model.safetensors"}) CHECK(fs::exists(int8 + "/" + file));
  CHECK(fs::file_size(int8 + "/model.safetensors") < fs::file_size(m.gru + "/model.safetensors"));
  CHECK(heed::read_file(int8 + "/tokenizer.json") == heed::read_file(m.gru + "/tokenizer.json"));

  // translate detects it (auto), and runs it in fp32 when asked
  const Result t = run(std::string(HEED_BINARY) + " --threads 1 translate -m " + int8 + " -i " + m.input);
  INFO(t.err);
  REQUIRE(t.exit_code == 0);
  CHECK(t.err.find("gru-bahdanau int8 model") != std::string::npos);
  CHECK(split_lines(t.out).size() == kLines.size());
  const Result f = run(std::string(HEED_BINARY) + " --threads 1 translate -m " + int8 + " --precision fp32 -i " + m.input);
  CHECK(f.exit_code == 0);
  CHECK(f.err.find("gru-bahdanau model") != std::string::npos);
  CHECK(split_lines(f.out).size() == kLines.size());
  // an fp32 model quantized on load
  const Result on_load = run(std::string(HEED_BINARY) + " --threads 1 translate -m " + m.gru + " --precision int8 -i " + m.input);
  CHECK(on_load.exit_code == 0);
  CHECK(on_load.err.find("gru-bahdanau int8 model") != std::string::npos);
  CHECK(split_lines(on_load.out).size() == kLines.size());
  // an ensemble of an int8 and an fp32 model
  const Result mixed = run(kHeed + " translate -m " + int8 + " -m " + m.gru + " -i " + m.input);
  CHECK(mixed.exit_code == 0);
  CHECK(split_lines(mixed.out).size() == kLines.size());
  const Result scored = run(kHeed + " score -m " + int8 + " -s " + m.input + " -t " + m.input);
  CHECK(scored.exit_code == 0);
  REQUIRE(split_lines(scored.out).size() == kLines.size());
  for (const std::string& line : split_lines(scored.out)) CHECK(std::stod(line) < 0);  // a log-probability

  // nothing is overwritten; an int8 model is not quantized again; bad values are usage errors
  const Result again = run(kHeed + " quantize -m " + m.gru + " -o " + int8);
  CHECK(again.exit_code == 2);
  CHECK(again.err.find("-o " + int8 + " exists") != std::string::npos);
  const Result twice = run(kHeed + " quantize -m " + int8 + " -o " + kDir + "/int8-again");
  CHECK(twice.exit_code == 2);
  CHECK(twice.err.find("is already an int8 model") != std::string::npos);
  CHECK_FALSE(fs::exists(kDir + "/int8-again"));
  const Result bad = run(kHeed + " translate -m " + int8 + " --precision int4 -i " + m.input);
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--precision") != std::string::npos);

  // An empty directory named with a trailing slash (as tab completion gives it) is filled: its
  // staging directory went inside it, and removing the directory then failed.
  const std::string slash = kDir + "/int8-slash";
  fs::remove_all(slash);
  fs::create_directory(slash);
  const Result with_slash = run(kHeed + " quantize -m " + m.gru + " -o " + slash + "/");
  INFO(with_slash.err);
  CHECK(with_slash.exit_code == 0);
  CHECK(heed::read_file(slash + "/model.safetensors") == heed::read_file(int8 + "/model.safetensors"));
  for (const auto& e : fs::directory_iterator(kDir))  // no staging directory left behind
    CHECK(e.path().filename().string().find(".tmp-") == std::string::npos);
}

TEST_CASE("a trained model's int8 translations equal its fp32 ones (reverse task)", "[cli][int8]") {
  const std::string fixture = std::string(HEED_TEST_FIXTURES) + "/reverse_gru";
  const std::string int8 = kDir + "/reverse-int8";
  fs::remove_all(int8);
  REQUIRE(run(kHeed + " quantize -m " + fixture + " -o " + int8).exit_code == 0);
  const double ratio = double(fs::file_size(fixture + "/model.safetensors")) / fs::file_size(int8 + "/model.safetensors");
  INFO("model.safetensors " << ratio << "x smaller");
  CHECK(ratio >= 3.5);
  const auto expected = split_lines(heed::read_file(fixture + "/test.tgt"));
  REQUIRE(expected.size() == 200);
  for (const std::string beam : {"1", "5"}) {
    const Result fp32 = run(kHeed + " translate -m " + fixture + " --beam " + beam + " -i " + fixture + "/test.src");
    const Result q = run(kHeed + " translate -m " + int8 + " --beam " + beam + " -i " + fixture + "/test.src");
    INFO(q.err);
    REQUIRE(fp32.exit_code == 0);
    REQUIRE(q.exit_code == 0);
    CHECK(split_lines(fp32.out) == expected);  // the fixture has learned the task
    CHECK(q.out == fp32.out);
  }
}
