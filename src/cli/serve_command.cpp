// heed serve: a translation server over HTTP (flags → options → serve::run_server). It runs until
// SIGTERM or Ctrl-C, then stops taking connections, answers the requests it has and exits 0.
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli/decoder_models.hpp"
#include "cli/registry.hpp"
#include "decode/translator.hpp"
#include "serve/server.hpp"
#include "train/model_dir.hpp"
#include "util/error.hpp"
#include "util/interrupt.hpp"
#include "util/threads.hpp"

namespace heed::cli {

namespace {

struct ServeArgs {
  std::vector<std::string> model_dirs;  // several: an ensemble
  std::string host = "127.0.0.1", precision = "auto";
  int port = 8080, max_batch_tokens = 0, max_wait_ms = 0, max_sentences = 256, max_sentence_length = 0, max_beam = 16,
      timeout_ms = 30000, io_threads = 64;
  size_t max_request_bytes = 1 << 20;
  CLI::Option *batch_tokens_opt = nullptr, *sentence_length_opt = nullptr;
};

// What answers call the model: its directory's name ("runs/quickstart/" → "quickstart", "." →
// the current directory's).
std::string model_name(const std::string& dir) { return run_name(std::filesystem::absolute(dir).string()); }

bool is_loopback(const std::string& host) {
  return host == "127.0.0.1" || host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

void run_serve(const ServeArgs& args) {
  DecoderModels models(args.model_dirs);
  nlohmann::json with_precision = to_json(models.config());
  apply_override(with_precision, "decoding.precision=" + args.precision, "--precision");
  const Config config = config_from_json(with_precision, args.model_dirs.front() + ": the command line");
  models.set_precision(config.decoding.precision);

  serve::ServeOptions options;
  serve::ServiceOptions& service = options.service;
  service.workers = num_threads();
  service.batching.max_batch_tokens = args.batch_tokens_opt->count()
                                          ? args.max_batch_tokens
                                          : (config.decoding.batch_tokens > 0 ? config.decoding.batch_tokens : 2048);
  service.batching.max_wait = std::chrono::milliseconds(args.max_wait_ms);
  // Never beyond what the model takes (an ensemble: its tightest member): a longer source would
  // fail inside the decoder, a 500 for its whole batch instead of a 413 for its request.
  const int sentence_tokens = args.sentence_length_opt->count() ? args.max_sentence_length : config.data.max_length;
  service.max_sentence_tokens = std::min(sentence_tokens, input_token_limit(models.model(), 0));
  if (service.max_sentence_tokens < sentence_tokens)
    spdlog::warn("serve: the model takes sentences of up to {} source tokens, not {}: longer ones are refused (413)",
                 service.max_sentence_tokens, sentence_tokens);
  serve::HttpOptions& http = options.http;
  http.host = args.host;
  http.port = args.port;
  http.max_request_bytes = args.max_request_bytes;
  http.limits.max_sentences = static_cast<size_t>(args.max_sentences);
  http.limits.max_beam = std::max(args.max_beam, config.decoding.beam);  // the model's own beam is always allowed
  http.default_beam = config.decoding.beam;
  http.timeout = std::chrono::milliseconds(args.timeout_ms);
  http.io_threads = args.io_threads;
  for (const std::string& dir : args.model_dirs)  // an ensemble's members joined: "a+b"
    http.model_name += (http.model_name.empty() ? "" : "+") + model_name(dir);
  if (!is_loopback(args.host))
    spdlog::warn("serve: listening on {}: other machines can reach this server, and it has no authentication",
                 args.host);

  const DecodingConfig& defaults = config.decoding;
  serve::run_server(
      models.model(), models.tokenizers(), defaults, options,
      [&](int port) {
        const std::string url = "http://" +
                                (args.host.find(':') != std::string::npos ? "[" + args.host + "]" : args.host) + ":" +
                                std::to_string(port) + "/";
        // The address on standard output (scripts read it, e.g. with --port 0), the rest in the log.
        std::printf("%s\n", url.c_str());
        std::fflush(stdout);
        spdlog::info("serve: {} '{}' on {}: {} decoding worker(s), batches of up to {} tokens, wait up to {} ms",
                     models.description(), http.model_name, url, service.workers, service.batching.max_batch_tokens,
                     args.max_wait_ms);
      },
      [] { return interrupted(); });
  spdlog::info("serve: stopped");
}

}  // namespace

void add_serve_command(CLI::App& app, Registry& registry) {
  auto args = std::make_shared<ServeArgs>();
  auto* sub = app.add_subcommand("serve", "translate over HTTP (JSON API, metrics, a web page) with dynamic batching");
  sub->add_option("-m,--model", args->model_dirs,
                  "model directory (config.json, tokenizer.json, model.safetensors); several: an ensemble")
      ->required();
  sub->add_option("--host", args->host, "address to listen on; other than loopback, anyone who can reach it may use it")
      ->capture_default_str();
  sub->add_option("--port", args->port, "TCP port; 0 = any free port (the address is printed on standard output)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  args->batch_tokens_opt =
      sub->add_option("--max-batch-tokens", args->max_batch_tokens,
                      "padded source tokens per batch (default: decoding.batch_tokens, or 2048 when that is 0)")
          ->check(CLI::PositiveNumber);
  sub->add_option("--max-wait-ms", args->max_wait_ms,
                  "longest a sentence waits for others to share its batch while another is decoded; 0 = never: a free "
                  "worker takes what is queued")
      ->check(CLI::Range(0, 60000))
      ->capture_default_str();
  sub->add_option("--precision", args->precision,
                  "products of the decoder's steps: int8, fp32, bf16 (every product; needs avx512_bf16), or auto (int8 for a model written by heed quantize)")
      ->capture_default_str();
  sub->add_option("--max-request-bytes", args->max_request_bytes, "larger request bodies are refused (413)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--max-sentences", args->max_sentences, "sentences per request; more are refused (413)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  args->sentence_length_opt =
      sub->add_option("--max-sentence-length", args->max_sentence_length,
                      "source tokens per sentence; longer sentences are refused (413) (default: data.max_length)")
          ->check(CLI::PositiveNumber);
  sub->add_option("--max-beam", args->max_beam, "largest beam a request may ask for (at least decoding.beam)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--timeout-ms", args->timeout_ms, "a request not answered within this time gets 503")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--io-threads", args->io_threads,
                  "connections served at once (their threads mostly wait); more wait their turn")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  registry.on_run(sub, [args] { run_serve(*args); }, ThreadUse::independent_workers);
}

}  // namespace heed::cli
