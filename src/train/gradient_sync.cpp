#include "train/gradient_sync.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "util/fnv1a.hpp"

namespace heed {

GradientSync::GradientSync(const ParameterSet& params, double bucket_mb, bool overlap)
    : active_(dist::size() > 1), overlap_(overlap) {
  if (!active_) return;
  for (const auto& [name, var] : params.all()) params_.push_back(var);
  const size_t bucket_floats = std::max<size_t>(1, static_cast<size_t>(bucket_mb * (1 << 20) / sizeof(float)));
  for (size_t i = params_.size(); i-- > 0;) {
    if (buckets_.empty() || buckets_.back().buffer.size() >= bucket_floats) buckets_.emplace_back();
    Bucket& b = buckets_.back();
    b.members.push_back(i);
    b.buffer.resize(b.buffer.size() + params_[i].value().numel());
    bucket_of_[params_[i].node()] = buckets_.size() - 1;
    watch_gradient(params_[i]);
  }
}

std::function<void(VarNode*)> GradientSync::on_complete() {
  if (!active_ || !overlap_) return nullptr;
  return [this](VarNode* node) {
    const auto it = bucket_of_.find(node);
    if (it == bucket_of_.end()) return;
    ++buckets_[it->second].completed;
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
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  double extremes[2] = {waited, -waited};
  dist::all_reduce_max(extremes, 2);
  totals_.most_wait_seconds += extremes[0];
  totals_.least_wait_seconds -= extremes[1];
}

uint64_t parameter_checksum(const ParameterSet& params) {
  Fnv1a hash;
  for (const auto& [name, var] : params.all()) {
    const Tensor& t = var.value();
    hash.add({reinterpret_cast<const char*>(t.data()), t.numel() * sizeof(float)});
  }
  return hash.h;
}

}  // namespace heed
