#pragma once
// Adam (Kingma & Ba 2015) and AdamW (decoupled weight decay, Loshchilov & Hutter 2019), with
// the bias-corrected update PyTorch's torch.optim.Adam/AdamW use, so both train alike:
//   m ← β1 m + (1−β1) g,  v ← β2 v + (1−β2) g²,  p ← p − lr · m̂ / (√v̂ + ε)
//   Adam: g includes weight_decay · p;  AdamW: p ← p − lr · weight_decay · p first.
// Plus the global gradient norm and clipping that precede it.
#include <vector>

#include "config/config.hpp"
#include "nn/parameters.hpp"

namespace heed {

class Adam {
 public:
  // Reads training.optimizer, beta1, beta2, eps and weight_decay.
  Adam(const ParameterSet& params, const TrainingConfig& training);
  // One update with learning rate lr from the parameters' current gradients (undefined = zero)
  // times grad_scale: clipping folded into the update, so the gradients are read once.
  void step(float lr, float grad_scale = 1.f);
  int64_t steps() const { return steps_; }

  // Moments by parameter name, for the trainer state.
  const std::vector<Tensor>& first_moments() const { return m_; }
  const std::vector<Tensor>& second_moments() const { return v_; }
  void set_state(int64_t steps, const std::vector<Tensor>& m, const std::vector<Tensor>& v);

 private:
  std::vector<Var> params_;
  TrainingConfig o_;
  std::vector<Tensor> m_, v_;
  int64_t steps_ = 0;
};

// √(Σ g²) over every parameter gradient (double accumulation); NaN/Inf propagate.
double global_grad_norm(const ParameterSet& params);
// The factor torch's clip_grad_norm_ scales every gradient by: min(1, max_norm / (norm + 1e-6)).
float clip_factor(double norm, float max_norm);

}  // namespace heed
