#pragma once
// A small reverse-mode autograd. A Var is a node holding a value and (after backward) a
// gradient. Each op computes its value eagerly and, when gradients are wanted, appends its
// backward function to the tape. backward(loss) runs the tape in reverse once and clears it,
// which frees every intermediate the closures kept alive. Parameter gradients accumulate across
// backward calls (gradient accumulation) until zero_grad.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tensor/tensor.hpp"

namespace heed {

struct VarNode {
  Tensor value;
  Tensor grad;  // undefined until a gradient reaches this node
  bool requires_grad = false;
  // Watched leaves (see watch_gradient): tape entries recorded since this node's gradient was
  // last complete that use it, and whether backward has run all of them.
  bool watched = false;
  bool grad_complete = false;
  int pending_uses = 0;
};

class Var {
 public:
  Var() = default;
  explicit Var(Tensor value, bool requires_grad = false);

  bool defined() const { return node_ != nullptr; }
  const Tensor& value() const { return node_->value; }
  const Tensor& grad() const { return node_->grad; }
  bool requires_grad() const { return node_ && node_->requires_grad; }
  const Shape& shape() const { return node_->value.shape(); }
  int64_t dim(int axis) const { return node_->value.dim(axis); }
  int ndim() const { return node_->value.ndim(); }
  VarNode* node() const { return node_.get(); }
  const std::shared_ptr<VarNode>& node_ptr() const { return node_; }

  // Adds g to the gradient (adopting g's storage when there was none: g must not be reused).
  void accumulate_grad(const Tensor& g) const;
  void zero_grad() const { node_->grad = Tensor(); }

 private:
  std::shared_ptr<VarNode> node_;
};

// Records gradients only while enabled and while some input requires them.
bool grad_enabled();
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

// True when an op with these inputs must record a backward function. Called once per op, with
// all its inputs, right before its record_backward: the call notes which watched leaves the
// op uses (each call starts that list afresh).
bool needs_grad(std::initializer_list<const Var*> inputs);
bool needs_grad(const std::vector<const Var*>& inputs);

// Appends a backward function to the tape (ops call this).
void record_backward(std::function<void()> backward);
size_t tape_size();
void clear_tape();

// Seeds d(loss)/d(loss) = 1 for a one-element loss, runs the tape in reverse, clears it.
// `on_complete`, when given, is called for each watched leaf as soon as the last tape entry that
// uses it has run: its gradient is final before the rest of the tape is done (data-parallel
// training starts summing it over processes there, while backward goes on). `between_entries`,
// when given, runs after every tape entry (there, that communication makes progress: MPI moves
// data only inside its calls).
void backward(const Var& loss, const std::function<void(VarNode*)>& on_complete = nullptr,
              const std::function<void()>& between_entries = nullptr);

// Counts, from now on, the tape entries that use `leaf` (a parameter), so that backward knows
// when its gradient is complete. A gradient that reaches it after that moment is a bug (an op
// that leaves an input out of needs_grad) and throws rather than being lost.
void watch_gradient(const Var& leaf);

// Output node's gradient, or an undefined tensor when nothing flowed back into it.
inline const Tensor& grad_of(const std::shared_ptr<VarNode>& node) { return node->grad; }

}  // namespace heed
