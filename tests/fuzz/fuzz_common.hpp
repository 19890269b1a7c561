#pragma once
// Shared by the fuzz targets: the contract every reader of untrusted input keeps. A defect in
// the input is a heed::Error (the CLI's one-line "heed: error: ..."); anything else escaping —
// another exception type, a crash, a sanitizer report, a failed invariant — is a finding.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "util/error.hpp"

namespace heed::fuzz {

inline std::string text(const uint8_t* data, size_t size) { return {reinterpret_cast<const char*>(data), size}; }

// Inputs a target's main reader accepted (the targets count them): the replay of inputs known to
// be valid checks it, so that a reader refusing everything cannot pass with its invariants unchecked.
inline int accepted_inputs = 0;

// Runs `body`; heed::Error is the expected outcome of bad input. True when the body ran through.
template <class Body>
bool expect_errors_only(Body&& body) {
  try {
    body();
    return true;
  } catch (const Error&) {
    return false;
  }
}

// A broken invariant: report and abort, so that libFuzzer keeps the input.
[[noreturn]] inline void broken(const std::string& what) {
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what.c_str());
  std::abort();
}

// A scratch path of this process in the temporary directory, removed (with what is under it)
// when the process exits normally; a crash leaves it for the report.
inline std::string scratch_path(const std::string& name) {
  static std::vector<std::filesystem::path> made;
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("heed-fuzz-" + std::to_string(::getpid()) + "-" + name);
  if (std::find(made.begin(), made.end(), path) == made.end()) {
    if (made.empty())
      std::atexit([] {
        std::error_code ignored;
        for (const auto& p : made) std::filesystem::remove_all(p, ignored);
      });
    made.push_back(path);
  }
  return path.string();
}

// A scratch file of this process, for readers that take a path.
inline std::string scratch_file(const std::string& name, const std::string& content) {
  const std::string path = scratch_path(name);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(content.data(), 1, content.size(), f) != content.size()) broken("cannot write " + path);
  std::fclose(f);
  return path;
}

}  // namespace heed::fuzz
