#pragma once
// The server's counters, rendered for GET /metrics in Prometheus' text format (version 0.0.4):
//   heed_requests_total{status="200"}   translation requests answered, by HTTP status
//   heed_sentences_total                 sentences in successful answers (empty lines included)
//   heed_source_tokens_total, heed_target_tokens_total   tokens in / out (best translation)
//   heed_batches_total, heed_batch_sentences_total        decoded batches and their sentences
//   heed_queue_sentences, heed_requests_in_flight         gauges, given when rendering
//   heed_request_duration_seconds                         histogram of translation requests
// Every request of POST /v1/translate counts, refused ones too; other endpoints do not.
#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace heed::serve {

class Metrics {
 public:
  // Upper bounds of the latency histogram's buckets, in seconds (+Inf follows).
  static constexpr std::array<double, 14> kBuckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                      0.25,  0.5,    1,     2.5,  5,     10,   30};

  void request_done(int status, double seconds);
  void sentences_done(uint64_t sentences, uint64_t source_tokens, uint64_t target_tokens);
  void batch_done(uint64_t sentences);
  std::string prometheus(uint64_t queue_sentences, uint64_t requests_in_flight) const;

 private:
  mutable std::mutex mutex_;
  std::map<int, uint64_t> requests_;  // by status
  uint64_t sentences_ = 0, source_tokens_ = 0, target_tokens_ = 0, batches_ = 0, batch_sentences_ = 0;
  std::array<uint64_t, kBuckets.size()> bucket_counts_{};  // not cumulative; summed when rendering
  uint64_t latency_count_ = 0;
  double latency_sum_ = 0;
};

}  // namespace heed::serve
