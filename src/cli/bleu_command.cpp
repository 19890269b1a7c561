// `heed bleu REF [REF2 ...] [-i HYP]`: sacreBLEU-compatible BLEU, chrF and TER with sacreBLEU's
// command line (long option names), score lines, signatures and JSON fields.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/output.hpp"
#include "cli/path_checks.hpp"
#include "cli/registry.hpp"
#include "cli/validators.hpp"
#include "metrics/bleu.hpp"
#include "metrics/chrf.hpp"
#include "metrics/ter.hpp"
#include "metrics/unicode.hpp"
#include "util/error.hpp"
#include "util/text_lines.hpp"

namespace heed::cli {

namespace {

using metrics::BleuOptions;
using metrics::ChrfOptions;
using Json = nlohmann::ordered_json;

struct BleuCommandOptions {
  std::vector<std::string> references;
  std::string input = "-";
  std::vector<std::string> metric_names{"bleu"};
  std::string tokenize = "13a";
  bool lowercase = false;
  std::string smooth_method = "exp";
  std::optional<double> smooth_value;
  bool effective_order = false;
  int chrf_char_order = 6, chrf_word_order = 0, chrf_beta = 2;
  bool sentence = false, score_only = false, json = false;
  std::string format = "text";
  int width = 1;
};

const std::string kVersion = std::string("heed-") + HEED_VERSION;

// Lines as sacreBLEU reads them: split at '\n' only, each rstrip()-ed (Unicode whitespace).
std::vector<std::string> read_segments(const std::string& path) {
  LineReader reader(path);
  std::vector<std::string> lines;
  std::string line;
  while (reader.next_utf8(line)) lines.emplace_back(metrics::python_rstrip(line));
  return lines;
}

std::string display_name(const std::string& path) { return path.empty() || path == "-" ? "<stdin>" : path; }

// One metric's result, formatted like sacreBLEU's Score.format().
struct MetricResult {
  std::string name, signature, verbose;
  double score = 0;
  Json extra = Json::object();
};

std::string format_fixed(double value, int width) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", width, value);
  return buf;
}

std::string format_text(const MetricResult& r, int width, bool score_only) {
  std::string score = format_fixed(r.score, width);
  if (score_only) return score;
  std::string line = r.name + "|" + r.signature + " = " + score;
  if (!r.verbose.empty()) line += " " + r.verbose;
  return line;
}

Json format_json(const MetricResult& r, int width) {
  Json j;
  j["name"] = r.name;
  j["score"] = std::strtod(format_fixed(r.score, width).c_str(), nullptr);  // float(f'{score:.{w}f}')
  j["signature"] = r.signature;
  if (!r.verbose.empty()) j["verbose_score"] = r.verbose;
  // sacreBLEU adds the signature's items as fields.
  size_t pos = 0;
  while (pos <= r.signature.size()) {
    size_t bar = r.signature.find('|', pos);
    if (bar == std::string::npos) bar = r.signature.size();
    std::string item = r.signature.substr(pos, bar - pos);
    size_t colon = item.find(':');
    if (colon != std::string::npos) j[item.substr(0, colon)] = item.substr(colon + 1);
    pos = bar + 1;
  }
  for (auto& [key, value] : r.extra.items()) j[key] = value;
  return j;
}

MetricResult bleu_result(const metrics::BleuScore& s, const BleuOptions& options, size_t num_refs) {
  MetricResult r{"BLEU", metrics::bleu_signature(options, num_refs, kVersion), s.verbose(), s.score};
  r.extra["counts"] = s.counts;
  r.extra["totals"] = s.totals;
  r.extra["precisions"] = s.precisions;
  r.extra["bp"] = s.bp;
  r.extra["ratio"] = s.ratio;
  r.extra["sys_len"] = s.sys_len;
  r.extra["ref_len"] = s.ref_len;
  return r;
}

MetricResult chrf_result(const metrics::ChrfStats& stats, const ChrfOptions& options, size_t num_refs) {
  return {metrics::chrf_name(options), metrics::chrf_signature(options, num_refs, kVersion), "",
          metrics::chrf_from_stats(stats, options)};
}

MetricResult ter_result(const metrics::TerStats& stats, size_t num_refs) {
  MetricResult r{"TER", metrics::ter_signature(num_refs, kVersion), "", metrics::ter_from_stats(stats)};
  r.extra["num_edits"] = stats.num_edits;
  r.extra["ref_length"] = stats.ref_length;
  return r;
}

void run_bleu(const BleuCommandOptions& o) {
  if (o.width < 0 || o.width > 17) throw UsageError("--width must be between 0 and 17, got " + std::to_string(o.width));
  if (o.format != "text" && o.format != "json")
    throw UsageError("--format must be text or json, got '" + o.format + "'");
  const bool json = o.json || o.format == "json";
  std::vector<std::string> order;
  for (const auto& m : o.metric_names) {
    if (m != "bleu" && m != "chrf" && m != "ter")
      throw UsageError("--metrics: unknown metric '" + m + "' (expected bleu, chrf or ter)");
    order.push_back(m);
  }
  BleuOptions bleu_options;
  bleu_options.tokenizer = metrics::parse_bleu_tokenizer(o.tokenize);
  bleu_options.lowercase = o.lowercase;
  bleu_options.smoothing = metrics::parse_bleu_smoothing(o.smooth_method);
  bleu_options.smooth_value = o.smooth_value;
  // sacreBLEU's sentence-level mode turns effective order on (a short line has no 4-grams).
  bleu_options.effective_order = o.effective_order || o.sentence;
  ChrfOptions chrf_options{o.chrf_char_order, o.chrf_word_order, o.chrf_beta};
  metrics::validate(chrf_options);

  std::vector<std::pair<std::string, std::string>> readers = {{"-i", o.input}};
  for (const auto& path : o.references) readers.push_back({"the reference '" + path + "'", path});
  refuse_stdin_twice(readers);
  std::vector<std::vector<std::string>> refs;
  for (const auto& path : o.references) refs.push_back(read_segments(path));
  std::vector<std::string> hyps = read_segments(o.input);
  if (hyps.empty())
    throw Error("hypothesis " + display_name(o.input) + " contains no lines (sacreBLEU refuses empty input too)");
  for (size_t r = 0; r < refs.size(); ++r)
    if (refs[r].size() != hyps.size())
      throw Error("hypothesis " + display_name(o.input) + " has " + std::to_string(hyps.size()) +
                  " lines but reference " + display_name(o.references[r]) + " has " + std::to_string(refs[r].size()) +
                  " lines");

  const size_t num_refs = refs.size();
  metrics::BleuSegmentScorer bleu_scorer(bleu_options);
  metrics::ChrfSegmentScorer chrf_scorer(chrf_options);
  metrics::BleuStats bleu_total;
  metrics::ChrfStats chrf_total;
  metrics::TerStats ter_total;
  std::vector<std::string_view> segment_refs(num_refs);

  auto emit = [&](const std::vector<MetricResult>& results, bool one_line_json) {
    std::string text;
    if (!json) {
      for (const auto& r : results) text += format_text(r, o.width, o.score_only) + "\n";
    } else if (one_line_json) {
      for (const auto& r : results) text += format_json(r, o.width).dump() + "\n";
    } else if (results.size() == 1) {
      text = format_json(results[0], o.width).dump(1) + "\n";
    } else {
      Json list = Json::array();
      for (const auto& r : results) list.push_back(format_json(r, o.width));
      text = list.dump(1) + "\n";
    }
    print(text);
  };

  for (size_t i = 0; i < hyps.size(); ++i) {
    for (size_t r = 0; r < num_refs; ++r) segment_refs[r] = refs[r][i];
    std::vector<MetricResult> segment_results;
    for (const auto& m : order) {
      if (m == "bleu") {
        metrics::BleuStats s = bleu_scorer.stats(hyps[i], segment_refs);
        bleu_total += s;
        if (o.sentence)
          segment_results.push_back(bleu_result(metrics::bleu_from_stats(s, bleu_options), bleu_options, num_refs));
      } else if (m == "chrf") {
        metrics::ChrfStats s = chrf_scorer.stats(hyps[i], segment_refs);
        chrf_total += s;
        if (o.sentence) segment_results.push_back(chrf_result(s, chrf_options, num_refs));
      } else {
        metrics::TerStats s = metrics::ter_segment_stats(hyps[i], segment_refs);
        ter_total += s;
        if (o.sentence) segment_results.push_back(ter_result(s, num_refs));
      }
    }
    if (o.sentence) emit(segment_results, true);
  }
  if (o.sentence) return;

  std::vector<MetricResult> results;
  for (const auto& m : order) {
    if (m == "bleu")
      results.push_back(bleu_result(metrics::bleu_from_stats(bleu_total, bleu_options), bleu_options, num_refs));
    else if (m == "chrf")
      results.push_back(chrf_result(chrf_total, chrf_options, num_refs));
    else
      results.push_back(ter_result(ter_total, num_refs));
  }
  emit(results, false);
}

}  // namespace

void add_bleu_command(CLI::App& app, Registry& registry) {
  auto o = std::make_shared<BleuCommandOptions>();
  auto* cmd =
      app.add_subcommand("bleu", "score a hypothesis file against references (sacreBLEU-compatible BLEU, chrF, TER)");
  cmd->add_option("references", o->references, "reference file(s), one segment a line")->required();
  cmd->add_option("-i,--input", o->input, "hypothesis file (default: standard input)");
  cmd->add_option("-m,--metrics", o->metric_names, "metrics to compute: bleu, chrf, ter (default: bleu)");
  cmd->add_option("--tokenize", o->tokenize, "BLEU tokenizer: 13a, intl, zh, char, none")->capture_default_str();
  cmd->add_flag("--lowercase", o->lowercase, "case-insensitive BLEU");
  cmd->add_option("-s,--smooth-method", o->smooth_method, "BLEU smoothing: exp, floor, add-k, none")
      ->capture_default_str();
  cmd->add_option("--smooth-value", o->smooth_value, "value for floor (default 0.1) or add-k (default 1)")
      ->check(number_from(0));  // a negative floor made a precision negative: BLEU nan, exit 0
  cmd->add_flag("--effective-order", o->effective_order, "BLEU over the n-gram orders the hypothesis has");
  cmd->add_option("--chrf-char-order", o->chrf_char_order, "chrF character n-gram order (1-6)")->capture_default_str();
  cmd->add_option("--chrf-word-order", o->chrf_word_order, "chrF word n-gram order (2 = chrF++)")
      ->capture_default_str();
  cmd->add_option("--chrf-beta", o->chrf_beta, "chrF recall weight")->capture_default_str();
  cmd->add_flag("--sentence,--sentence-level", o->sentence, "one score per line instead of the corpus score");
  cmd->add_flag("-b,--score-only", o->score_only, "print only the score (text format)");
  cmd->add_option("-w,--width", o->width, "decimals of the printed scores")->capture_default_str();
  cmd->add_option("-f,--format", o->format, "text or json")->capture_default_str();
  cmd->add_flag("--json", o->json, "same as --format json");
  registry.on_run(cmd, [o] { run_bleu(*o); });
}

}  // namespace heed::cli
