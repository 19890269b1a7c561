#include "train/gradient_sync.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace heed {

GradientSync::GradientSync(const ParameterSet& params, double bucket_mb, bool overlap)
    : active_(dist::size() > 1), overlap_(overlap) {
  if (!active_) return;
  for (const auto& [name, var] : params.all()) params_.push_back(var);
  const size_t bucket_floats = std::max<size_t>(1, static_cast<size_t>(bucket_mb * (1 << 20) / sizeof(float)));
  bucket_of_.resize(params_.size());
  for (size_t i = params_.size(); i-- > 0;) {
    if (buckets_.empty() || buckets_.back().buffer.size() >= bucket_floats) buckets_.emplace_back();
    Bucket& b = buckets_.back();
    b.members.push_back(i);
    b.buffer.resize(b.buffer.size() + params_[i].value().numel());
    bucket_of_[i] = buckets_.size() - 1;
    index_of_[params_[i].node()] = i;
    watch_gradient(params_[i]);
  }
}

std::function<void(VarNode*)> GradientSync::on_complete() {
  if (!active_ || !overlap_) return nullptr;
  return [this](VarNode* node) {
    const auto it = index_of_.find(node);
    if (it == index_of_.end()) return;
    ++buckets_[bucket_of_[it->second]].completed;
    start_due_buckets();
  };
}

std::function<void()> GradientSync::between_entries() {
  if (!active_ || !overlap_) return nullptr;
  return [this] {
    // Tape entries can take microseconds: test at most every 50 us, and only the oldest
    // unfinished bucket (MPI_Test progresses them all).
    if (finished_ == next_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_test_ < std::chrono::microseconds(50)) return;
    last_test_ = now;
    while (finished_ < next_ && buckets_[finished_].pending->test()) ++finished_;
  };
}

void GradientSync::start(Bucket& bucket) {
  float* out = bucket.buffer.data();
  for (size_t i : bucket.members) {
    const Tensor& g = params_[i].grad();
    const size_t n = params_[i].value().numel();
    if (g.defined())
      std::memcpy(out, g.data(), n * sizeof(float));
    else
      std::memset(out, 0, n * sizeof(float));
    out += n;
  }
  bucket.pending = std::make_unique<dist::PendingSum>(bucket.buffer.data(), bucket.buffer.size());
}

void GradientSync::start_due_buckets() {
  while (next_ < buckets_.size() && buckets_[next_].completed == buckets_[next_].members.size())
    start(buckets_[next_++]);
}

void GradientSync::finish() {
  if (!active_) return;
  const auto begin = std::chrono::steady_clock::now();
  while (next_ < buckets_.size()) start(buckets_[next_++]);
  for (Bucket& bucket : buckets_) {
    bucket.pending->wait();
    bucket.pending.reset();
    bucket.completed = 0;
    const float* in = bucket.buffer.data();
    for (size_t i : bucket.members) {
      // A fresh tensor, not the old gradient's storage: an op may have handed that storage to
      // more than one node.
      const Var& p = params_[i];
      Tensor sum = Tensor::empty(p.shape());
      const size_t n = sum.numel();
      std::memcpy(sum.data(), in, n * sizeof(float));
      p.node()->grad = std::move(sum);
      in += n;
    }
    totals_.bytes += bucket.buffer.size() * sizeof(float);
  }
  next_ = finished_ = 0;
  ++totals_.steps;
  totals_.exposed_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

uint64_t parameter_checksum(const ParameterSet& params) {
  uint64_t h = 0x9E3779B97F4A7C15ull;
  for (const auto& [name, var] : params.all()) {
    const Tensor& t = var.value();
    const auto* bytes = reinterpret_cast<const unsigned char*>(t.data());
    const size_t n = t.numel() * sizeof(float);
    for (size_t i = 0; i + 8 <= n; i += 8) {
      uint64_t word;
      std::memcpy(&word, bytes + i, 8);
      h = (h ^ word) * 0x100000001B3ull;
      h ^= h >> 29;
    }
    for (size_t i = n - n % 8; i < n; ++i) h = (h ^ bytes[i]) * 0x100000001B3ull;
  }
  return h;
}

}  // namespace heed
