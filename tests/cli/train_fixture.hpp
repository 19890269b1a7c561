#pragma once
// Helpers for the `heed train` CLI tests: a tiny parallel corpus (sources of 3–8 words from a
// 100-word vocabulary, targets the same words reversed: learnable in a few dozen steps), a tiny
// GRU config, and running the real executable, in the foreground or as a child to signal.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include "../temp_dir.hpp"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace heed::test {

namespace fs = std::filesystem;

inline const std::string kHeed = HEED_BINARY;

using test::TempDir;

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The records of MODEL_DIR/metrics.jsonl whose "type" is TYPE, in the file's order.
inline std::vector<nlohmann::json> metrics_records(const std::string& model_dir, const std::string& type) {
  std::vector<nlohmann::json> records;
  std::istringstream lines(slurp(model_dir + "/metrics.jsonl"));
  for (std::string line; std::getline(lines, line);)
    if (auto record = nlohmann::json::parse(line); record.at("type") == type) records.push_back(std::move(record));
  return records;
}

struct Result {
  int exit_code = -1;
  std::string out, err;
};

// Runs a shell command line, capturing stdout and stderr.
inline Result run(const std::string& command, const std::string& scratch) {
  const std::string out = scratch + ".out", err = scratch + ".err";
  const int status = std::system(("(" + command + ") > '" + out + "' 2> '" + err + "'").c_str());
  Result r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

// `pairs` reversal pairs into dir/NAME.src and dir/NAME.tgt.
inline void write_reverse_corpus(const std::string& dir, const std::string& name, int pairs, uint32_t seed) {
  static const char* syllables[] = {"ka", "lo", "mi", "nu", "pe", "ri", "so", "ta", "vu", "ze"};
  std::mt19937 rng(seed);  // raw outputs only: the same text with every standard library
  std::ofstream src(dir + "/" + name + ".src"), tgt(dir + "/" + name + ".tgt");
  for (int i = 0; i < pairs; ++i) {
    const int len = 3 + static_cast<int>(rng() % 6);
    std::vector<std::string> words;
    for (int k = 0; k < len; ++k) {
      const uint32_t w = rng() % 100;
      words.push_back(std::string(syllables[w / 10]) + syllables[w % 10]);
    }
    for (int k = 0; k < len; ++k) src << (k ? " " : "") << words[k];
    for (int k = len - 1; k >= 0; --k) tgt << (k < len - 1 ? " " : "") << words[k];
    src << '\n';
    tgt << '\n';
  }
}

// A tiny GRU config training on dir/train.{src,tgt}; `training` entries override the defaults.
inline std::string write_tiny_config(const std::string& dir, const nlohmann::json& training = {},
                                     bool with_dev = false) {
  nlohmann::json c = {
      {"seed", 3},
      {"model",
       {{"arch", "gru-bahdanau"},
        {"dropout", 0.1},
        {"gru", {{"emb_dim", 8}, {"enc_hidden", 12}, {"dec_hidden", 12}, {"attn_dim", 8}, {"readout_dim", 8}}}}},
      {"data", {{"train", {{"src", dir + "/train.src"}, {"tgt", dir + "/train.tgt"}}}, {"max_length", 40}}},
      {"tokenizer", {{"vocab_size", 300}}},
      {"training",
       {{"learning_rate", 0.01},
        {"batch_tokens", 150},
        {"max_steps", 30},
        {"validate_every", 5},
        {"log_every", 5},
        {"keep_last", 100},
        {"validation_metric", "cross-entropy"}}},
      {"decoding", {{"beam", 1}}}};
  if (with_dev) c["data"]["dev"] = {{"src", dir + "/dev.src"}, {"tgt", dir + "/dev.tgt"}};
  for (auto& [key, value] : training.items()) c["training"][key] = value;
  const std::string path = dir + "/config.json";
  std::ofstream(path) << c.dump(2);
  return path;
}

// `heed --threads 1 train ARGS...` as a child process (stdout/stderr to files); returns its pid.
inline pid_t spawn_heed(const std::vector<std::string>& args, const std::string& log) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const std::string out = log + ".out", err = log + ".err";
    std::freopen(out.c_str(), "w", stdout);
    std::freopen(err.c_str(), "w", stderr);
    std::vector<char*> argv{const_cast<char*>(kHeed.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(kHeed.c_str(), argv.data());
    std::_Exit(127);
  }
  return pid;
}

// Exit code of a child (−signal when it was killed by one).
inline int wait_child(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

// Polls (every millisecond) until `path` exists or the child ended; true when it exists.
inline bool wait_for_file(const std::string& path, pid_t child, double timeout_seconds = 60) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (fs::exists(path)) return true;
    siginfo_t info{};
    // WNOWAIT: look without reaping, so wait_child still gets the exit status
    if (::waitid(P_PID, child, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == child)
      return fs::exists(path);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

}  // namespace heed::test
