#pragma once
// Data-parallel training's gradient exchange: after backward, every rank holds the sum over all
// ranks of every parameter's gradient. Gradients travel in fused buckets of about bucket_mb
// (one all-reduce per bucket, not per tensor), and with `overlap` each bucket is started the
// moment backward has completed all of its gradients (autograd's on_complete), so the exchange
// runs while backward computes the rest. Buckets start in one fixed order on every rank
// (collectives must match across ranks); parameters fill them in reverse creation order, roughly
// the order in which backward completes them. Alone (one rank) it does nothing.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "dist/process_group.hpp"
#include "nn/parameters.hpp"

namespace heed {

class GradientSync {
 public:
  GradientSync(const ParameterSet& params, double bucket_mb, bool overlap);

  // For the step's last backward: starts buckets as their gradients complete, and drives the
  // started ones on between tape entries (both nullptr when alone or without overlap).
  std::function<void(VarNode*)> on_complete();
  std::function<void()> between_entries();
  // After backward: starts the buckets still waiting, waits for all, and writes the sums into
  // the gradients (a gradient no rank produced becomes zeros: Adam treats both alike).
  void finish();

  struct Totals {
    int64_t steps = 0;
    double bytes = 0;            // summed per step (fp32 gradients)
    // Waited in finish(), per update the least and the most over the ranks: the least-waiting
    // rank (the last out of backward) waits for the communication backward did not hide; the
    // others wait for it too.
    double least_wait_seconds = 0, most_wait_seconds = 0;
  };
  const Totals& totals() const { return totals_; }
  size_t bucket_count() const { return buckets_.size(); }

 private:
  struct Bucket {
    std::vector<size_t> members;  // indices into params_
    std::vector<float> buffer;
    size_t completed = 0;  // members whose gradient backward has completed this step
    std::unique_ptr<dist::PendingSum> pending;
  };
  void start(Bucket& bucket);
  void start_due_buckets();

  bool active_;
  bool overlap_;
  std::vector<Var> params_;
  std::unordered_map<const VarNode*, size_t> bucket_of_;
  std::vector<Bucket> buckets_;
  size_t next_ = 0;      // first bucket not started this step
  size_t finished_ = 0;  // buckets before this one are known to be done
  std::chrono::steady_clock::time_point last_test_;
  Totals totals_;
};

// A hash of every parameter's bytes, to check that all ranks hold the same model.
uint64_t parameter_checksum(const ParameterSet& params);

}  // namespace heed
