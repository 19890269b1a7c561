// heed tokenizer train|encode|decode: learn a BPE tokenizer, and apply it to text streams line by
// line (stdin/stdout or -i/-o files), in batches encoded on all threads, in input order.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/output.hpp"
#include "cli/path_checks.hpp"
#include "cli/registry.hpp"
#include "cli/validators.hpp"
#include "text/tokenizers.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/interrupt.hpp"
#include "util/parallel.hpp"
#include "util/parse_number.hpp"
#include "util/text_lines.hpp"
#include "util/threads.hpp"
#include "util/utf8.hpp"

namespace heed::cli {

namespace {

constexpr size_t kBatchLines = 8192;

struct TrainArgs {
  int vocab_size = 8000;
  double character_coverage = 0.9995;
  bool no_split_by_script = false;
  int max_piece_length = 16;
  std::string output;
  std::vector<std::string> files, source_files, target_files;
};

struct StreamArgs {
  std::string model, input = "-", output, side;
  bool ids = false, replace_invalid = false;
};

void run_train(const TrainArgs& args) {
  TokenizerOptions opts;
  opts.vocab_size = args.vocab_size;
  opts.character_coverage = args.character_coverage;
  opts.split_by_script = !args.no_split_by_script;
  opts.max_piece_length = args.max_piece_length;
  const bool separate = !args.source_files.empty() || !args.target_files.empty();
  for (const auto* inputs : {&args.files, &args.source_files, &args.target_files})
    refuse_output_over_input(args.output, *inputs);
  if (separate) {
    if (args.source_files.empty() || args.target_files.empty() || !args.files.empty())
      throw UsageError("separate tokenizers need --source-files and --target-files (and no positional FILE)");
    Tokenizers::separate(Tokenizer::train(args.source_files, opts), Tokenizer::train(args.target_files, opts))
        .save(args.output);
  } else {
    if (args.files.empty()) throw UsageError("give the training text FILE(s), or --source-files and --target-files");
    Tokenizers::joint(Tokenizer::train(args.files, opts)).save(args.output);
  }
  spdlog::info("tokenizer: wrote {}", args.output);
}

const Tokenizer& choose_side(const Tokenizers& tokenizers, const StreamArgs& args) {
  if (!args.side.empty() && args.side != "source" && args.side != "target")
    throw UsageError("--side must be source or target, got '" + args.side + "'");
  if (tokenizers.is_joint()) return tokenizers.source();
  if (args.side.empty())
    throw UsageError(args.model + " holds separate source and target tokenizers: choose one with --side source|target");
  return args.side == "source" ? tokenizers.source() : tokenizers.target();
}

// Reads batches of lines, transforms each line (on all threads) and writes the results in order.
// transform(line, out) returns an error message, empty on success; the first error (in input
// order) stops the run, naming file and line.
template <typename Transform>
void stream_lines(const StreamArgs& args, Transform transform) {
  refuse_output_over_input(args.output, {args.input, args.model});
  LineReader reader(args.input);
  Output output(args.output);
  std::vector<std::string> lines, results, errors;
  size_t replaced = 0, lines_with_replacement = 0;
  std::string line;
  for (;;) {
    throw_if_interrupted();
    const size_t first_line = reader.line_number() + 1;
    lines.clear();
    while (lines.size() < kBatchLines) {
      if (args.replace_invalid) {
        if (!reader.next(line)) break;
        if (size_t n = replace_invalid_utf8(line)) {
          replaced += n;
          ++lines_with_replacement;
        }
      } else if (!reader.next_utf8(line)) {
        break;
      }
      lines.push_back(std::move(line));
    }
    if (lines.empty()) break;
    results.assign(lines.size(), {});
    errors.assign(lines.size(), {});
    const auto n = static_cast<long>(lines.size());
    ParallelFailure failure;
#pragma omp parallel for num_threads(num_threads()) schedule(dynamic, 64)
    for (long i = 0; i < n; ++i) failure.capture([&] { errors[i] = transform(lines[i], results[i]); });
    failure.rethrow();
    std::string text;
    for (size_t i = 0; i < lines.size(); ++i) {
      if (!errors[i].empty()) throw Error(reader.name() + ":" + std::to_string(first_line + i) + ": " + errors[i]);
      text += results[i];
      text += '\n';
    }
    output.write(text);
  }
  output.finish();
  if (replaced > 0)
    spdlog::warn("{}: replaced {} invalid UTF-8 sequence(s) by U+FFFD in {} line(s)", reader.name(), replaced,
                 lines_with_replacement);
}

void run_encode(const StreamArgs& args) {
  const Tokenizers tokenizers = Tokenizers::load(args.model);
  const Tokenizer& tok = choose_side(tokenizers, args);
  stream_lines(args, [&](const std::string& line, std::string& out) {
    for (int id : tok.encode(line)) {
      if (!out.empty()) out += ' ';
      if (args.ids)
        out += std::to_string(id);
      else
        out += tok.piece(id);
    }
    return std::string();
  });
}

void run_decode(const StreamArgs& args) {
  const Tokenizers tokenizers = Tokenizers::load(args.model);
  const Tokenizer& tok = choose_side(tokenizers, args);
  stream_lines(args, [&](const std::string& line, std::string& out) {
    std::vector<int> ids;
    for (size_t start = 0; start < line.size();) {
      size_t end = line.find(' ', start);
      if (end == std::string::npos) end = line.size();
      std::string_view token(line.data() + start, end - start);
      start = end + 1;
      if (token.empty()) continue;
      int id = kUnkId;
      if (args.ids) {
        const std::optional<int> parsed = parse_number<int>(token);
        if (!parsed || *parsed < 0 || *parsed >= tok.vocab_size())
          return "'" + std::string(token) + "' is not a token id (0.." + std::to_string(tok.vocab_size() - 1) + ")";
        id = *parsed;
      } else {
        id = tok.piece_id(token);
        if (id == kUnkId && token != tok.piece(kUnkId))
          return "unknown piece '" + std::string(token) + "' (not in " + args.model + ")";
      }
      ids.push_back(id);
    }
    out = tok.decode(ids);
    return std::string();
  });
}

void add_stream_options(CLI::App* sub, StreamArgs& args) {
  sub->add_option("-m,--model", args.model, "tokenizer.json")->required();
  sub->add_option("-i,--input", args.input, "input file (default: standard input)");
  sub->add_option("-o,--output", args.output, "output file, written atomically (default: standard output)");
  sub->add_option("--side", args.side, "source or target, for a tokenizer.json with separate sides");
  sub->add_flag("--ids", args.ids, "token ids instead of pieces");
  sub->add_flag("--replace-invalid", args.replace_invalid,
                "replace invalid UTF-8 by U+FFFD (counted and reported) instead of stopping with an error");
}

}  // namespace

void add_tokenizer_command(CLI::App& app, Registry& registry) {
  auto* tokenizer = app.add_subcommand("tokenizer", "learn and apply the subword (BPE) tokenizer");
  tokenizer->require_subcommand(1);

  auto train_args = std::make_shared<TrainArgs>();
  auto* train = tokenizer->add_subcommand("train", "learn a BPE tokenizer from text files (one sentence a line)");
  train->add_option("--vocab-size", train_args->vocab_size, "vocabulary size, including 4 specials and 256 bytes")
      ->capture_default_str();
  train
      ->add_option("--character-coverage", train_args->character_coverage,
                   "share of character occurrences kept in the alphabet; rarer characters become byte tokens")
      ->capture_default_str();
  train->add_flag("--no-split-by-script", train_args->no_split_by_script,
                  "let learned pieces mix scripts, and letters with digits and punctuation");
  train
      ->add_option("--max-piece-length", train_args->max_piece_length,
                   "longest learned piece in characters, the leading word marker included")
      ->capture_default_str()
      ->check(whole_number(2, 1 << 20));
  train->add_option("-o,--output", train_args->output, "tokenizer.json to write")->required();
  train->add_option("FILE", train_args->files, "training text for one joint source+target tokenizer");
  train->add_option("--source-files", train_args->source_files, "source-side text (separate tokenizers)");
  train->add_option("--target-files", train_args->target_files, "target-side text (separate tokenizers)");
  registry.on_run(train, [train_args] { run_train(*train_args); });

  auto encode_args = std::make_shared<StreamArgs>();
  auto* encode = tokenizer->add_subcommand("encode", "text -> space-separated pieces (or --ids), line by line");
  add_stream_options(encode, *encode_args);
  registry.on_run(encode, [encode_args] { run_encode(*encode_args); });

  auto decode_args = std::make_shared<StreamArgs>();
  auto* decode = tokenizer->add_subcommand("decode", "space-separated pieces (or --ids) -> text, line by line");
  add_stream_options(decode, *decode_args);
  registry.on_run(decode, [decode_args] { run_decode(*decode_args); });
}

}  // namespace heed::cli
