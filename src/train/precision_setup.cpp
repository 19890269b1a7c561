#include "train/precision_setup.hpp"

#include <spdlog/spdlog.h>

namespace heed {
namespace {
PrecisionRequest request_of(ComputePrecision p) {
  switch (p) {
    case ComputePrecision::bf16:
      return PrecisionRequest::bf16;
    case ComputePrecision::auto_:
      return PrecisionRequest::auto_;
    case ComputePrecision::fp32:
      break;
  }
  return PrecisionRequest::fp32;
}
}  // namespace

PrecisionSetup::PrecisionSetup(const TrainingConfig& tc, bool cpu_bf16)
    : precision_(resolve_precision(request_of(tc.precision), cpu_bf16, "training.precision")),
      previous_(matmul_precision()) {
  if (tc.precision == ComputePrecision::auto_)
    spdlog::info("training.precision auto: {} (this CPU {} bf16 dot products)",
                 precision_ == MatmulPrecision::bf16 ? "bf16" : "fp32", cpu_bf16 ? "has" : "has no");
  set_matmul_precision(precision_);
}

PrecisionSetup::~PrecisionSetup() {
  copies_.reset();
  set_matmul_precision(previous_);
}

void PrecisionSetup::attach(const ParameterSet& params) {
  if (precision_ != MatmulPrecision::bf16) return;
  std::vector<Tensor> matrices;
  for (const auto& [name, var] : params.all())
    if (var.value().ndim() >= 2) matrices.push_back(var.value());
  copies_ = std::make_unique<Bf16WeightCopies>(std::move(matrices));
}

}  // namespace heed
