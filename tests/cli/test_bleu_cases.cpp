// Every sacreBLEU parity case in tests/fixtures/bleu_cases runs through the real `heed bleu` and must
// reproduce sacreBLEU 2.6.0's numbers to the precision it printed (see that folder's README).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct RunResult {
  int exit_code;
  std::string out;
};

RunResult run(const std::string& command) {
  RunResult result{-1, ""};
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) result.out.append(buf, n);
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string quote(const std::string& s) { return "'" + s + "'"; }

// sacreBLEU's short options in args.txt, as heed's long options.
std::string heed_args(const std::string& sacrebleu_args) {
  std::istringstream in(sacrebleu_args);
  std::string word, out;
  while (in >> word) {
    if (word == "-tok")
      word = "--tokenize";
    else if (word == "-lc")
      word = "--lowercase";
    else if (word == "-s")
      word = "--smooth-method";
    else if (word == "-sv")
      word = "--smooth-value";
    out += " " + quote(word);
  }
  return out;
}

std::string without_version(const std::string& signature) { return signature.substr(0, signature.rfind("|version:")); }

const json* find_metric(const json& list, const std::string& name) {
  for (const auto& m : list)
    if (m.at("name") == name) return &m;
  return nullptr;
}

// Compares one case; returns true when everything matched (failures are reported by CHECK).
bool check_case(const fs::path& dir) {
  const json expected = json::parse(read_text(dir / "expected.json"));
  std::string command = "cd " + quote(dir.string()) + " && " + quote(HEED_BINARY) + " -q bleu";
  for (const auto& ref : expected.at("refs")) command += " " + quote(ref.get<std::string>());
  command += " -i hyp.txt -m bleu chrf ter -w 4 --format json" + heed_args(expected.at("args")) + " 2>/dev/null";
  RunResult r = run(command);
  INFO("case " << dir.filename().string() << ": " << command << "\n" << r.out);

  if (expected.at("expect_error")) {
    CHECK(r.exit_code != 0);
    CHECK(r.out.empty());
    return r.exit_code != 0 && r.out.empty();
  }
  REQUIRE(r.exit_code == 0);
  const json got = json::parse(r.out);
  const json* bleu = find_metric(got, "BLEU");
  const json* chrf = find_metric(got, "chrF2");
  const json* ter = find_metric(got, "TER");
  REQUIRE(bleu);
  REQUIRE(chrf);
  REQUIRE(ter);
  const json& eb = expected.at("bleu");
  const json& ec = expected.at("chrf");
  const json& et = expected.at("ter");

  bool ok = true;
  auto same = [&](bool condition) {
    ok = ok && condition;
    return condition;
  };
  // Scores: as printed with 4 decimals (heed prints them the same way).
  CHECK(same(bleu->at("score").get<double>() == eb.at("score").get<double>()));
  CHECK(same(bleu->at("counts") == eb.at("counts")));
  CHECK(same(bleu->at("totals") == eb.at("totals")));
  CHECK(same(bleu->at("sys_len") == eb.at("sys_len")));
  CHECK(same(bleu->at("ref_len") == eb.at("ref_len")));
  CHECK(same(std::abs(bleu->at("bp").get<double>() - eb.at("bp").get<double>()) <= 1e-12));
  CHECK(same(std::abs(bleu->at("ratio").get<double>() - eb.at("ratio").get<double>()) <= 1e-12));
  for (size_t n = 0; n < 4; ++n)
    CHECK(same(std::abs(bleu->at("precisions")[n].get<double>() - eb.at("precisions")[n].get<double>()) <= 1e-9));
  CHECK(same(bleu->at("verbose_score") == eb.at("verbose_score")));
  CHECK(same(without_version(bleu->at("signature")) == without_version(eb.at("signature"))));
  CHECK(same(chrf->at("score").get<double>() == ec.at("score").get<double>()));
  CHECK(same(without_version(chrf->at("signature")) == without_version(ec.at("signature"))));
  CHECK(same(ter->at("score").get<double>() == et.at("score").get<double>()));
  CHECK(same(ter->at("num_edits") == et.at("num_edits")));
  CHECK(same(ter->at("ref_length").get<double>() == et.at("ref_length").get<double>()));
  CHECK(same(without_version(ter->at("signature")) == without_version(et.at("signature"))));
  CHECK(same(bleu->at("signature").get<std::string>().ends_with("|version:heed-" HEED_VERSION)));
  return ok;
}

}  // namespace

TEST_CASE("heed bleu reproduces every sacreBLEU case") {
  std::vector<fs::path> cases;
  for (const auto& entry : fs::directory_iterator(fs::path(HEED_TEST_FIXTURES) / "bleu_cases"))
    if (entry.is_directory()) cases.push_back(entry.path());
  std::sort(cases.begin(), cases.end());
  REQUIRE(cases.size() >= 28);
  size_t passed = 0;
  for (const auto& dir : cases) passed += check_case(dir);
  std::printf("bleu cases passed: %zu of %zu\n", passed, cases.size());
  CHECK(passed == cases.size());
}

namespace {

struct BadInputFiles {
  fs::path dir;
  BadInputFiles() : dir(fs::temp_directory_path() / ("heed_bleu_bad_input_" + std::to_string(getpid()))) {
    fs::create_directories(dir);
    write("ref.txt", "a b c\nd e f\n");
    write("one_line.txt", "a b c\n");
    write("empty.txt", "");
    write("blank_lines.txt", "\n\n");
    write("bad_utf8.txt", "a b c\nd \xff f\n");
  }
  ~BadInputFiles() { fs::remove_all(dir); }
  void write(const std::string& name, const std::string& text) { std::ofstream(dir / name) << text; }
  RunResult bleu(const std::string& args) {
    return run("cd " + quote(dir.string()) + " && " + quote(HEED_BINARY) + " bleu " + args + " 2>&1");
  }
};

}  // namespace

TEST_CASE("heed bleu rejects bad input with one clear error") {
  BadInputFiles files;
  RunResult r = files.bleu("ref.txt -i one_line.txt");
  CHECK(r.exit_code == 1);
  CHECK(r.out == "heed: error: hypothesis one_line.txt has 1 lines but reference ref.txt has 2 lines\n");

  r = files.bleu("ref.txt -i missing.txt");
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("missing.txt") != std::string::npos);
  CHECK(r.out.find("BLEU") == std::string::npos);

  r = files.bleu("ref.txt -i bad_utf8.txt");
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("bad_utf8.txt:2:") != std::string::npos);

  // sacreBLEU refuses an empty hypothesis file too ("contains no sentence").
  r = files.bleu("ref.txt -i empty.txt");
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("empty.txt contains no lines") != std::string::npos);

  r = files.bleu("ref.txt -i ref.txt --tokenize 14a");
  CHECK(r.exit_code == 2);
  r = files.bleu("ref.txt -i ref.txt --metrics bleu meteor");
  CHECK(r.exit_code == 2);
}

TEST_CASE("heed bleu on empty hypothesis lines and text output") {
  BadInputFiles files;
  RunResult r = files.bleu("ref.txt -i blank_lines.txt -m bleu chrf ter");
  CHECK(r.exit_code == 0);
  CHECK(r.out == "BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:heed-" HEED_VERSION
                 " = 0.0 0.0/0.0/0.0/0.0 (BP = 0.000 ratio = 0.000 hyp_len = 0 ref_len = 6)\n"
                 "chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:heed-" HEED_VERSION
                 " = 0.0\n"
                 "TER|nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:heed-" HEED_VERSION " = 100.0\n");
  // hypothesis from standard input, one score per line
  r = files.bleu("ref.txt -m chrf --sentence -b < ref.txt");
  CHECK(r.exit_code == 0);
  CHECK(r.out == "100.0\n100.0\n");
}

TEST_CASE("heed bleu --sentence uses effective order for BLEU, as sacreBLEU's sentence-level mode does") {
  // sacreBLEU 2.x: `sacrebleu ref -sl` sets bleu_effective_order; a two-word exact match is
  // 100.0 with eff:yes there, and was 0.0 (no 3- or 4-grams) with eff:no here.
  BadInputFiles files;
  files.write("short.txt", "Thank you\n");
  RunResult r = files.bleu("short.txt -m bleu --sentence < short.txt");
  CHECK(r.exit_code == 0);
  CHECK(r.out == "BLEU|nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|version:heed-" HEED_VERSION
                 " = 100.0 100.0/100.0/0.0/0.0 (BP = 1.000 ratio = 1.000 hyp_len = 2 ref_len = 2)\n");
}

TEST_CASE("heed bleu: an empty reference line is a reference of length 0, as in sacreBLEU 2.6") {
  // sacreBLEU 2.6 drops only None references (which its command line never makes): an empty line
  // stays a reference with no n-grams and length 0, nrefs stays the number of files, and a line
  // whose references are all empty is scored (2.0.0 dropped empty references and refused such a
  // line; mjpost/sacrebleu#161 undid that). Hand-derived from its BLEU, CHRF and TER classes:
  //   line 1 "the cat sat on the mat": ref1 equal, ref2 empty; line 2 "a b c d": ref1 empty,
  //   ref2 "a b c d e f g h" (lengths 0 and 8 are both 4 away: the tie goes to the shorter, 0);
  //   line 3 "hello world": both empty.
  // BLEU: counts 6+4+0 / 5+3+0 / 4+2 / 3+1 of totals 12/9/6/4, hyp_len 12, ref_len 6+0+0 (BP 1):
  //   (10/12 · 8/9)^(1/4) = 92.7719. Line 2 alone (effective order, ref_len 0): 100; dropping the
  //   empty reference would make it exp(1 - 8/4) = 36.8.
  // chrF: each line takes the stats of its best reference; an empty one gives [0, 0, 0] per order
  //   (no hypothesis n-grams counted without reference n-grams), so line 3 adds nothing. Per order
  //   n = 1..6 every hypothesis n-gram matches, recall (17+4, 16+3, 15+2, 14+1, 13, 12) / (17+8,
  //   16+7, 15+6, 14+5, 13+4, 12+3): 5R/(4+R) with R their mean = 83.7639; line 2 alone 41.8598.
  // TER: best edits 0, 4, 2 over average reference lengths (6+0)/2, (0+8)/2, 0: 6/7 = 85.7143;
  //   line 2 alone 4/4 = 100 (dropping the empty reference would make it 4/8 = 50).
  BadInputFiles files;
  files.write("hyp3.txt", "the cat sat on the mat\na b c d\nhello world\n");
  files.write("ref3a.txt", "the cat sat on the mat\n\n\n");
  files.write("ref3b.txt", "\na b c d e f g h\n\n");
  const std::string v = "|version:heed-" HEED_VERSION;
  const std::string bleu = "BLEU|nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp" + v;
  const std::string bleu_eff = "BLEU|nrefs:2|case:mixed|eff:yes|tok:13a|smooth:exp" + v;
  const std::string chrf = "chrF2|nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no" + v;
  const std::string ter = "TER|nrefs:2|case:lc|tok:tercom|norm:no|punct:yes|asian:no" + v;
  RunResult r = files.bleu("ref3a.txt ref3b.txt -i hyp3.txt -m bleu chrf ter -w 4");
  CHECK(r.exit_code == 0);
  CHECK(r.out == bleu + " = 92.7719 83.3/88.9/100.0/100.0 (BP = 1.000 ratio = 2.000 hyp_len = 12 ref_len = 6)\n" +
                     chrf + " = 83.7639\n" + ter + " = 85.7143\n");

  r = files.bleu("ref3a.txt ref3b.txt -i hyp3.txt -m bleu chrf ter -w 4 --sentence");
  CHECK(r.exit_code == 0);
  CHECK(r.out == bleu_eff + " = 100.0000 100.0/100.0/100.0/100.0 (BP = 1.000 ratio = 1.000 hyp_len = 6 ref_len = 6)\n" +
                     chrf + " = 100.0000\n" + ter + " = 0.0000\n" + bleu_eff +
                     " = 100.0000 100.0/100.0/100.0/100.0 (BP = 1.000 ratio = 0.000 hyp_len = 4 ref_len = 0)\n" + chrf +
                     " = 41.8598\n" + ter + " = 100.0000\n" + bleu_eff +
                     " = 0.0000 0.0/0.0/0.0/0.0 (BP = 1.000 ratio = 0.000 hyp_len = 2 ref_len = 0)\n" + chrf +
                     " = 0.0000\n" + ter + " = 100.0000\n");
}
