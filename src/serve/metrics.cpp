#include "serve/metrics.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace heed::serve {
namespace {

// A float as Prometheus reads it: whole numbers without exponent ("10"), others with the
// fewest digits that read back exactly ("0.0025").
std::string number(double v) {
  char buf[40];
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

void family(std::string& out, const char* name, const char* type, const char* help) {
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void sample(std::string& out, const std::string& name, uint64_t value) {
  out += name + " " + std::to_string(value) + "\n";
}

}  // namespace

void Metrics::request_done(int status, double seconds) {
  const std::lock_guard<std::mutex> lock(mutex_);
  ++requests_[status];
  ++latency_count_;
  latency_sum_ += seconds;
  for (size_t b = 0; b < kBuckets.size(); ++b)
    if (seconds <= kBuckets[b]) {
      ++bucket_counts_[b];
      break;
    }
}

void Metrics::sentences_done(uint64_t sentences, uint64_t source_tokens, uint64_t target_tokens) {
  const std::lock_guard<std::mutex> lock(mutex_);
  sentences_ += sentences;
  source_tokens_ += source_tokens;
  target_tokens_ += target_tokens;
}

void Metrics::batch_done(uint64_t sentences) {
  const std::lock_guard<std::mutex> lock(mutex_);
  ++batches_;
  batch_sentences_ += sentences;
}

std::string Metrics::prometheus(uint64_t queue_sentences, uint64_t requests_in_flight) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  family(out, "heed_requests_total", "counter", "Translation requests answered, by HTTP status.");
  if (requests_.empty()) out += "heed_requests_total{status=\"200\"} 0\n";
  for (const auto& [status, count] : requests_)
    sample(out, "heed_requests_total{status=\"" + std::to_string(status) + "\"}", count);
  family(out, "heed_sentences_total", "counter", "Sentences in successful translation responses.");
  sample(out, "heed_sentences_total", sentences_);
  family(out, "heed_source_tokens_total", "counter", "Source tokens of the translated sentences.");
  sample(out, "heed_source_tokens_total", source_tokens_);
  family(out, "heed_target_tokens_total", "counter", "Tokens of the best translations.");
  sample(out, "heed_target_tokens_total", target_tokens_);
  family(out, "heed_batches_total", "counter", "Batches decoded.");
  sample(out, "heed_batches_total", batches_);
  family(out, "heed_batch_sentences_total", "counter", "Sentences in the decoded batches.");
  sample(out, "heed_batch_sentences_total", batch_sentences_);
  family(out, "heed_queue_sentences", "gauge", "Sentences waiting for a decoding worker.");
  sample(out, "heed_queue_sentences", queue_sentences);
  family(out, "heed_requests_in_flight", "gauge", "Translation requests being handled.");
  sample(out, "heed_requests_in_flight", requests_in_flight);
  family(out, "heed_request_duration_seconds", "histogram", "Time from receiving a translation request to its answer.");
  uint64_t cumulative = 0;
  for (size_t b = 0; b < kBuckets.size(); ++b) {
    cumulative += bucket_counts_[b];
    sample(out, "heed_request_duration_seconds_bucket{le=\"" + number(kBuckets[b]) + "\"}", cumulative);
  }
  sample(out, "heed_request_duration_seconds_bucket{le=\"+Inf\"}", latency_count_);
  out += "heed_request_duration_seconds_sum " + number(latency_sum_) + "\n";
  sample(out, "heed_request_duration_seconds_count", latency_count_);
  return out;
}

}  // namespace heed::serve
