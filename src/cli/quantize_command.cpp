// heed quantize -m DIR -o DIR8: a model directory whose large matrices are int8 (see
// train/checkpoint.hpp for the file, tensor/quantize.hpp for the scheme). The new directory
// holds config.json, tokenizer.json and model.safetensors, and appears whole or not at all: it
// is written under a temporary name and renamed. It translates (heed translate detects the int8
// file) but does not resume training: no trainer state is copied.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

#include "cli/registry.hpp"
#include "train/checkpoint.hpp"
#include "util/error.hpp"

namespace heed::cli {

namespace {

namespace fs = std::filesystem;

struct QuantizeArgs {
  std::string model_dir, output;
};

void run_quantize(const QuantizeArgs& args) {
  std::error_code ec;
  if (fs::exists(args.output, ec) && !(fs::is_directory(args.output, ec) && fs::is_empty(args.output, ec)))
    throw UsageError("-o " + args.output + " exists: heed quantize writes a new model directory (give a new path)");
  ModelBundle bundle = load_model_dir(args.model_dir);
  if (bundle.int8) throw UsageError("-m " + args.model_dir + " is already an int8 model");

  int64_t int8_tensors = 0, int8_values = 0, tensors = 0, values = 0;
  for (const auto& [name, var] : bundle.model->parameters().all()) {
    ++tensors;
    values += var.value().numel();
    if (!quantizable(var.value())) continue;
    ++int8_tensors;
    int8_values += var.value().numel();
  }

  fs::path target = fs::absolute(args.output).lexically_normal();
  if (target.filename().empty()) target = target.parent_path();  // "out8/": its staging beside it, not inside
  const fs::path staging = target.parent_path() / (target.filename().string() + ".tmp-" + std::to_string(getpid()));
  fs::remove_all(staging, ec);
  if (!fs::create_directories(staging, ec) || ec)
    throw Error("cannot create " + staging.string() + ": " + (ec ? ec.message() : "it exists"));
  try {
    save_config(bundle.config, (staging / "config.json").string());
    bundle.tokenizers.save((staging / "tokenizer.json").string());
    save_parameters((staging / "model.safetensors").string(), bundle.model->parameters(), {}, /*int8=*/true);
    if (fs::exists(target)) fs::remove(target);  // the empty directory checked above
    fs::rename(staging, target);
  } catch (...) {
    fs::remove_all(staging, ec);
    throw;
  }
  const double before = static_cast<double>(fs::file_size(fs::path(args.model_dir) / "model.safetensors"));
  const double after = static_cast<double>(fs::file_size(target / "model.safetensors"));
  spdlog::info("quantize: {} of {} tensors ({:.1f} % of {} parameters) to int8; model.safetensors {:.2f} MB -> "
               "{:.2f} MB ({:.2f}x smaller)",
               int8_tensors, tensors, 100.0 * static_cast<double>(int8_values) / static_cast<double>(values), values,
               before / 1e6, after / 1e6, before / after);
}

}  // namespace

void add_quantize_command(CLI::App& app, Registry& registry) {
  auto args = std::make_shared<QuantizeArgs>();
  auto* sub = app.add_subcommand("quantize",
                                 "write an int8 copy of a model: its large matrices as int8 rows with fp32 scales, "
                                 "about 4x smaller; heed translate runs it with int8 products");
  sub->add_option("-m,--model", args->model_dir, "model directory to quantize")->required();
  sub->add_option("-o,--output", args->output, "new model directory (must not exist, or be empty)")->required();
  registry.on_run(sub, [args] { run_quantize(*args); });
}

}  // namespace heed::cli
