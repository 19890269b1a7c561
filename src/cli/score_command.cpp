// heed score: forced decoding. The log-probability a model (or an ensemble) gives each given
// translation, one output line per line pair: 'log-probability ||| score', with --tokens also
// ' ||| piece=log-probability ...' for each target token and </s>. Streams in chunks like
// translate. Unlike translate, nothing is cut: a line longer than the model's positions is an
// error naming it, since the score of a cut sentence would be a wrong number.
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/config_flags.hpp"
#include "cli/decoder_models.hpp"
#include "cli/output.hpp"
#include "cli/path_checks.hpp"
#include "cli/registry.hpp"
#include "decode/forced_scores.hpp"
#include "decode/translator.hpp"
#include "util/error.hpp"
#include "util/interrupt.hpp"
#include "util/text_lines.hpp"

namespace heed::cli {

namespace {

constexpr size_t kChunkLines = 4000;  // line pairs read, scored and written at a time

struct ScoreArgs {
  std::vector<std::string> model_dirs;
  std::string source, target, output;
  bool tokens = false;
  std::unique_ptr<ConfigFlags> decoding_flags;  // --length-penalty, --batch-size, --batch-tokens
};

std::string number(float value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", value);
  return buf;
}

std::vector<int32_t> encode_line(const Tokenizer& tokenizer, const std::string& line, const LineReader& reader,
                                 int limit) {
  const std::vector<int> ids = tokenizer.encode(trim_space(line));  // as training read the pair
  if (static_cast<int>(ids.size()) > limit)
    throw Error(reader.name() + ":" + std::to_string(reader.line_number()) + ": " + std::to_string(ids.size()) +
                " tokens; the model scores at most " + std::to_string(limit) + " (a longer line is not cut: its "
                "score would be wrong)");
  return {ids.begin(), ids.end()};
}

// Tokens a side may have: what the model's positions hold (with </s> or <s>) and heed's limit.
int side_limit(int positions) { return positions > 0 ? std::min(positions - 1, kMaxInputTokens) : kMaxInputTokens; }

void run_score(const ScoreArgs& args) {
  DecoderModels models(args.model_dirs);
  Seq2Seq& model = models.model();
  nlohmann::json j = to_json(models.config());
  args.decoding_flags->apply(j);
  const DecodingConfig decoding = config_from_json(j, models.first_dir() + ": the command line").decoding;
  const Tokenizer& source_tok = models.tokenizers().source();
  const Tokenizer& target_tok = models.tokenizers().target();
  spdlog::info("score: {}, length penalty {}", models.description(), decoding.length_penalty);

  std::vector<std::string> inputs = {args.source, args.target};
  for (const std::string& dir : args.model_dirs)
    for (const std::string& file : model_files(dir)) inputs.push_back(file);
  refuse_output_over_input(args.output, inputs);
  refuse_stdin_twice({{"-s", args.source}, {"-t", args.target}});
  LineReader sources(args.source), targets(args.target);
  Output output(args.output);
  const int source_limit = side_limit(model.max_source_positions());
  const int target_limit = side_limit(model.max_target_positions());
  std::string src_line, tgt_line;
  size_t pairs = 0;
  for (;;) {
    throw_if_interrupted();
    std::vector<std::vector<int32_t>> src_ids, tgt_ids;
    while (src_ids.size() < kChunkLines) {
      const bool has_source = sources.next_utf8(src_line);
      const bool has_target = targets.next_utf8(tgt_line);
      if (has_source != has_target) {
        const LineReader& shorter = has_source ? targets : sources;
        const LineReader& longer = has_source ? sources : targets;
        throw Error(shorter.name() + " ends after line " + std::to_string(shorter.line_number()) + ", but " +
                    longer.name() + " has more lines: -s and -t must be line-aligned");
      }
      if (!has_source) break;
      src_ids.push_back(encode_line(source_tok, src_line, sources, source_limit));
      tgt_ids.push_back(encode_line(target_tok, tgt_line, targets, target_limit));
    }
    if (src_ids.empty()) break;
    const auto scores = forced_scores(model, src_ids, tgt_ids, decoding);
    std::string text;
    for (size_t i = 0; i < scores.size(); ++i) {
      const ForcedScore& s = scores[i];
      text += number(s.log_prob) + " ||| " + number(s.score);
      if (args.tokens) {
        text += " |||";
        for (size_t t = 0; t < s.token_log_probs.size(); ++t)
          text += " " + (t < tgt_ids[i].size() ? target_tok.piece(tgt_ids[i][t]) : std::string("</s>")) + "=" +
                  number(s.token_log_probs[t]);
      }
      text += '\n';
    }
    output.write(text);
    pairs += scores.size();
  }
  output.finish();
  spdlog::info("score: {} line pairs", pairs);
}

}  // namespace

void add_score_command(CLI::App& app, Registry& registry) {
  auto args = std::make_shared<ScoreArgs>();
  auto* sub = app.add_subcommand(
      "score",
      "score given translations with a model (forced decoding): one line 'log-probability ||| score' per line pair, "
      "score = log-probability / length^alpha as translate --scores; for reranking and corpus filtering");
  sub->add_option("-m,--model", args->model_dirs, "model directory; repeat it to score with an ensemble")->required();
  sub->add_option("-s,--source", args->source, "source sentences, one a line")->required();
  sub->add_option("-t,--target", args->target, "their translations, line-aligned with --source")->required();
  sub->add_option("-o,--output", args->output, "output file, written atomically (default: standard output)");
  sub->add_flag("--tokens", args->tokens,
                "append ' ||| ' and each target token's log-probability as 'piece=value', then '</s>=value'");
  args->decoding_flags = std::make_unique<ConfigFlags>(
      *sub, std::vector<std::string>{"decoding.length_penalty", "decoding.batch_size", "decoding.batch_tokens"});
  registry.on_run(sub, [args] { run_score(*args); });
}

}  // namespace heed::cli
