// GET /metrics: the Prometheus text of the server's counters, gauges and latency histogram.
#include <catch2/catch.hpp>

#include "serve/metrics.hpp"

using namespace heed::serve;

namespace {

// The sample lines (no # comments).
std::string samples(const std::string& text) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end - start);
    if (!line.empty() && line[0] != '#') out += line + "\n";
    start = end + 1;
  }
  return out;
}

}  // namespace

TEST_CASE("metrics count requests by status, sentences, tokens, batches, and bucket latencies", "[serve]") {
  Metrics m;
  // Powers of two, so that the sum is exact.
  m.request_done(200, 0.00390625);       // le 0.005
  m.request_done(200, 0.015625);         // le 0.025
  m.request_done(400, 0.0001220703125);  // le 0.001
  m.request_done(503, 40);               // beyond every bucket: +Inf only
  m.sentences_done(3, 20, 25);
  m.sentences_done(1, 4, 6);
  m.batch_done(2);
  m.batch_done(1);
  const std::string text = m.prometheus(7, 2);
  CHECK(samples(text) ==
        "heed_requests_total{status=\"200\"} 2\n"
        "heed_requests_total{status=\"400\"} 1\n"
        "heed_requests_total{status=\"503\"} 1\n"
        "heed_sentences_total 4\n"
        "heed_source_tokens_total 24\n"
        "heed_target_tokens_total 31\n"
        "heed_batches_total 2\n"
        "heed_batch_sentences_total 3\n"
        "heed_queue_sentences 7\n"
        "heed_requests_in_flight 2\n"
        "heed_request_duration_seconds_bucket{le=\"0.001\"} 1\n"
        "heed_request_duration_seconds_bucket{le=\"0.0025\"} 1\n"
        "heed_request_duration_seconds_bucket{le=\"0.005\"} 2\n"
        "heed_request_duration_seconds_bucket{le=\"0.01\"} 2\n"
        "heed_request_duration_seconds_bucket{le=\"0.025\"} 3\n"
        "heed_request_duration_seconds_bucket{le=\"0.05\"} 3\n"
        "heed_request_duration_seconds_bucket{le=\"0.1\"} 3\n"
        "heed_request_duration_seconds_bucket{le=\"0.25\"} 3\n"
        "heed_request_duration_seconds_bucket{le=\"0.5\"} 3\n"
        "heed_request_duration_seconds_bucket{le=\"1\"} 3\n"
        "heed_request_duration_seconds_bucket{le=\"2.5\"} 3\n"
        "heed_request_duration_seconds_bucket{le=\"5\"} 3\n"
        "heed_request_duration_seconds_bucket{le=\"10\"} 3\n"
        "heed_request_duration_seconds_bucket{le=\"30\"} 3\n"
        "heed_request_duration_seconds_bucket{le=\"+Inf\"} 4\n"
        "heed_request_duration_seconds_sum 40.0196533203125\n"
        "heed_request_duration_seconds_count 4\n");
  CHECK(text.find("# TYPE heed_requests_total counter\n") != std::string::npos);
  CHECK(text.find("# TYPE heed_queue_sentences gauge\n") != std::string::npos);
  CHECK(text.find("# TYPE heed_request_duration_seconds histogram\n") != std::string::npos);
}

TEST_CASE("a fresh server shows zero counts", "[serve]") {
  const std::string text = samples(Metrics().prometheus(0, 0));
  CHECK(text.rfind("heed_requests_total{status=\"200\"} 0\nheed_sentences_total 0\n", 0) == 0);
  CHECK(text.find("heed_request_duration_seconds_count 0\n") != std::string::npos);
}
