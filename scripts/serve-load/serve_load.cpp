// heed-serve-load: a load client for `heed serve` (scripts/bench-serve.sh). N clients, each a
// thread with its own keep-alive connection, send one sentence per request, in turn from the
// input lines, until the requests or the time run out. Prints one JSON object: requests, errors,
// answers that differ from the expected lines, seconds, sentences/s, latency percentiles, and
// the client's own CPU time, which competes with the server's on a small machine.
#include <httplib.h>
#include <sys/resource.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t i = std::min(sorted.size() - 1, static_cast<size_t>(p / 100 * sorted.size()));
  return sorted[i];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"load client for heed serve: single-sentence requests from N clients", "heed-serve-load"};
  std::string url, input, expect;
  int clients = 1;
  long requests = 1000;
  double max_seconds = 600;
  app.add_option("--url", url, "server address, e.g. http://127.0.0.1:8080/")->required();
  app.add_option("-i,--input", input, "sentences, one a line, sent in turn")->required();
  app.add_option("--expect", expect, "the translations the answers must equal, line by line (heed translate's)");
  app.add_option("--clients", clients, "concurrent clients")->check(CLI::Range(1, 1024));
  app.add_option("--requests", requests, "requests in all")->check(CLI::PositiveNumber);
  app.add_option("--max-seconds", max_seconds, "stop sending after this long")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  std::smatch m;
  if (!std::regex_match(url, m, std::regex(R"(http://([^/:]+):(\d+)/?)"))) {
    std::fprintf(stderr, "heed-serve-load: --url must look like http://HOST:PORT/\n");
    return 2;
  }
  const std::string host = m[1];
  const int port = std::stoi(m[2]);
  const auto lines = read_lines(input);
  const auto expected = expect.empty() ? std::vector<std::string>{} : read_lines(expect);
  if (lines.empty() || (!expected.empty() && expected.size() != lines.size())) {
    std::fprintf(stderr, "heed-serve-load: no input, or --expect has another line count\n");
    return 2;
  }

  std::atomic<long> next{0};
  std::atomic<long> errors{0}, mismatches{0};
  std::mutex merge;
  std::vector<double> latencies;
  std::string first_error;
  const double cpu_start = cpu_seconds();
  const auto start = Clock::now();
  const auto stop_at = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(max_seconds));
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c)
    threads.emplace_back([&] {
      httplib::Client client(host, port);
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      client.set_read_timeout(120, 0);
      std::vector<double> mine;
      std::string error;
      for (long i; Clock::now() < stop_at && (i = next++) < requests;) {
        const size_t line = static_cast<size_t>(i) % lines.size();
        const std::string body = json{{"text", {lines[line]}}}.dump();
        const auto sent = Clock::now();
        const auto r = client.Post("/v1/translate", body, "application/json");
        mine.push_back(std::chrono::duration<double>(Clock::now() - sent).count());
        if (!r || r->status != 200) {
          ++errors;
          if (error.empty()) error = r ? std::to_string(r->status) + " " + r->body : httplib::to_string(r.error());
          continue;
        }
        if (!expected.empty()) {
          std::string got = json::parse(r->body)["translations"][0].get<std::string>();
          std::replace(got.begin(), got.end(), '\n', ' ');  // as heed translate writes a line
          std::replace(got.begin(), got.end(), '\r', ' ');
          if (got != expected[line]) ++mismatches;
        }
      }
      const std::lock_guard<std::mutex> lock(merge);
      latencies.insert(latencies.end(), mine.begin(), mine.end());
      if (first_error.empty()) first_error = error;
    });
  for (auto& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const double client_cpu = cpu_seconds() - cpu_start;
  std::sort(latencies.begin(), latencies.end());
  double sum = 0;
  for (double l : latencies) sum += l;
  const long done = static_cast<long>(latencies.size());
  json out = {{"clients", clients},
              {"requests", done},
              {"errors", errors.load()},
              {"mismatches", expected.empty() ? json(nullptr) : json(mismatches.load())},
              {"seconds", seconds},
              {"sentences_per_second", done / seconds},
              {"latency_ms",
               {{"mean", done ? sum / done * 1000 : 0},
                {"p50", percentile(latencies, 50) * 1000},
                {"p90", percentile(latencies, 90) * 1000},
                {"p99", percentile(latencies, 99) * 1000},
                {"max", latencies.empty() ? 0 : latencies.back() * 1000}}},
              {"client_cpu_seconds", client_cpu},
              {"client_cores", client_cpu / seconds}};
  if (!first_error.empty()) out["first_error"] = first_error;
  std::printf("%s\n", out.dump().c_str());
  return errors > 0 ? 1 : 0;
}
