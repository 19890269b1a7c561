#pragma once
// Checks of a command's input and output paths, before any work: an output that would replace one
// of the inputs, and standard input named twice (two readers would take alternate lines).
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "util/error.hpp"

namespace heed::cli {

// A file output that is also one of the command's inputs would be replaced by the result (renamed
// over it at the end, once the input has been read): refused before any work, exit 2. A FIFO or
// a device is written in place, never replaced, so it passes; "" and "-" are the standard streams.
inline void refuse_output_over_input(const std::string& output, const std::vector<std::string>& inputs) {
  std::error_code error;
  if (output.empty() || output == "-" || !std::filesystem::is_regular_file(output, error)) return;
  for (const std::string& input : inputs)
    if (!input.empty() && input != "-" && std::filesystem::equivalent(output, input, error))
      throw UsageError("-o " + output + " is also the input " + input +
                       ": the output would replace it; write the output elsewhere");
}

// The files of model directory `dir` that a command reads (config, tokenizer, weights).
inline std::vector<std::string> model_files(const std::string& dir) {
  std::vector<std::string> files;
  for (const char* name : {"config.json", "tokenizer.json", "model.safetensors"})
    files.push_back((std::filesystem::path(dir) / name).string());
  return files;
}

// Every file directly in `dir` (a graph directory's), none when it cannot be listed.
inline std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code error;
  for (std::filesystem::directory_iterator it(dir, error), end; !error && it != end; it.increment(error))
    files.push_back(it->path().string());
  return files;
}

// Each entry a flag and its path ({"-s", source}); "-" and "" are standard input (LineReader).
inline void refuse_stdin_twice(const std::vector<std::pair<std::string, std::string>>& flags_and_paths) {
  std::string first;
  for (const auto& [flag, path] : flags_and_paths) {
    if (!path.empty() && path != "-") continue;
    if (!first.empty())
      throw UsageError(first + " and " + flag + " both read standard input; give one of them as a file");
    first = flag;
  }
}

}  // namespace heed::cli
