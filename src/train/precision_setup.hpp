#pragma once
// training.precision for a run: resolved on this CPU (bf16 on a CPU without it is a usage error,
// before anything is written; auto logs its choice), set for the process's products while this
// object lives (tensor/precision.hpp), and in bf16 the bf16 copies of the model's matrices,
// refreshed at every update and whenever parameters are loaded.
#include <memory>

#include "config/config.hpp"
#include "nn/parameters.hpp"
#include "tensor/precision.hpp"

namespace heed {

class PrecisionSetup {
 public:
  explicit PrecisionSetup(const TrainingConfig& tc, bool cpu_bf16 = cpu_has_bf16());
  ~PrecisionSetup();
  PrecisionSetup(const PrecisionSetup&) = delete;
  PrecisionSetup& operator=(const PrecisionSetup&) = delete;
  void attach(const ParameterSet& params);  // bf16: copies of every parameter of two or more axes
  MatmulPrecision precision() const { return precision_; }

 private:
  MatmulPrecision precision_, previous_;
  std::unique_ptr<Bf16WeightCopies> copies_;
};

}  // namespace heed
