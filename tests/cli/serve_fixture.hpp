#pragma once
// Helpers for the `heed serve` tests: a server child process on a free loopback port (--port 0;
// it prints its address on standard output), an HTTP client for it, and the reference output of
// `heed translate` for the same lines.
#include <httplib.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "model_fixture.hpp"
#include "train_fixture.hpp"

namespace heed::test {

// `heed --threads 1 serve -m MODEL --port 0 FLAGS...`, stopped with SIGTERM when destroyed.
class ServerProcess {
 public:
  ServerProcess(const std::string& model, const std::string& log, const std::vector<std::string>& flags = {})
      : log_(log) {
    std::vector<std::string> args = {"--threads", "1", "serve", "-m", model, "--port", "0"};
    args.insert(args.end(), flags.begin(), flags.end());
    fs::remove(log + ".out");  // an earlier server's address must not be read as this one's
    fs::remove(log + ".err");
    pid_ = spawn_heed(args, log);
    if (pid_ <= 0) return;
    // The address line appears once the socket listens; the model loads in well under a second.
    const std::regex url(R"(^http://127\.0\.0\.1:(\d+)/\n)");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline && port_ == 0) {
      std::smatch m;
      const std::string out = slurp(log + ".out");
      if (std::regex_search(out, m, url)) port_ = std::stoi(m[1]);
      siginfo_t info{};
      if (::waitid(P_PID, pid_, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid_) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  ~ServerProcess() {
    if (pid_ > 0 && exit_code_ == kRunning) stop();
  }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  // SIGTERM, then its exit code (or −signal).
  int stop() {
    if (pid_ <= 0) return exit_code_;
    ::kill(pid_, SIGTERM);
    exit_code_ = wait_child(pid_);
    return exit_code_;
  }
  std::string log() const { return slurp(log_ + ".err"); }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(60, 0);
    return c;
  }

 private:
  static constexpr int kRunning = -1000;
  std::string log_;
  pid_t pid_ = -1;
  int port_ = 0;
  int exit_code_ = kRunning;
};

struct Answer {
  int status = 0;
  nlohmann::json body;  // null when the body is not JSON
  std::string raw;
};

inline Answer to_answer(const httplib::Result& r) {
  Answer a;
  if (!r) return a;
  a.status = r->status;
  a.raw = r->body;
  a.body = nlohmann::json::parse(r->body, nullptr, false);
  if (a.body.is_discarded()) a.body = nullptr;
  return a;
}

inline Answer post(const ServerProcess& server, const std::string& body) {
  auto client = server.client();
  return to_answer(client.Post("/v1/translate", body, "application/json"));
}

inline Answer post(const ServerProcess& server, const nlohmann::json& body) { return post(server, body.dump()); }

inline Answer get(const ServerProcess& server, const std::string& path) {
  auto client = server.client();
  return to_answer(client.Get(path.c_str()));
}

// The value of one sample of GET /metrics, e.g. "heed_requests_total{status=\"200\"}"; −1 if absent.
inline double metric(const ServerProcess& server, const std::string& sample) {
  auto client = server.client();
  const auto r = client.Get("/metrics");
  if (!r) return -1;
  std::istringstream in(r->body);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(sample + " ", 0) == 0) return std::stod(line.substr(sample.size() + 1));
  return -1;
}

// One output line of `heed translate` holds one translation: line breaks become spaces there.
inline std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  return text;
}

// `heed --threads 1 translate -m MODEL FLAGS` on `lines`: its output lines.
inline std::vector<std::string> translate_offline(const std::string& model, const std::vector<std::string>& lines,
                                                  const std::string& flags, const std::string& scratch_name) {
  const std::string scratch = scratch_name + ".offline";  // apart from a server's log of the same name
  {
    std::ofstream in(scratch + ".in");
    for (const auto& l : lines) in << l << '\n';
  }
  const Result r =
      run(kHeed + " --threads 1 --quiet translate -m " + model + " -i " + scratch + ".in " + flags, scratch);
  std::vector<std::string> out;
  std::istringstream in(r.out);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// `count` lines of the sample text from the first-th on, of those short enough (60 bytes) to
// stay within the servers' and translate's length limits (100 tokens) with the tiny tokenizer.
inline std::vector<std::string> sample_lines(size_t first, size_t count) {
  std::ifstream in(std::string(HEED_TEST_FIXTURES) + "/text/sample.en");
  std::vector<std::string> lines;
  size_t i = 0;
  for (std::string l; lines.size() < count && std::getline(in, l);)
    if (l.size() <= 60 && i++ >= first) lines.push_back(l);
  return lines;
}

}  // namespace heed::test
