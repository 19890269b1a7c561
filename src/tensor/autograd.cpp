#include "tensor/autograd.hpp"

#include "tensor/ops.hpp"
#include "util/error.hpp"

namespace heed {
namespace {
thread_local bool g_grad_enabled = true;
thread_local std::vector<std::function<void()>> g_tape;
}  // namespace

Var::Var(Tensor value, bool requires_grad) : node_(std::make_shared<VarNode>()) {
  node_->value = std::move(value);
  node_->requires_grad = requires_grad;
}

void Var::accumulate_grad(const Tensor& g) const {
  if (!node_->requires_grad) return;
  if (g.shape() != node_->value.shape())
    throw Error("gradient of shape " + shape_str(g.shape()) + " for a value of shape " +
                shape_str(node_->value.shape()));
  if (!node_->grad.defined())
    node_->grad = g.is_contiguous() ? g : g.clone();
  else
    add_into(node_->grad, g);
}

bool grad_enabled() { return g_grad_enabled; }

NoGradGuard::NoGradGuard() : previous_(g_grad_enabled) { g_grad_enabled = false; }
NoGradGuard::~NoGradGuard() { g_grad_enabled = previous_; }

bool needs_grad(std::initializer_list<const Var*> inputs) {
  if (!g_grad_enabled) return false;
  for (const Var* v : inputs)
    if (v->requires_grad()) return true;
  return false;
}

void record_backward(std::function<void()> backward) { g_tape.push_back(std::move(backward)); }
size_t tape_size() { return g_tape.size(); }
void clear_tape() { g_tape.clear(); }

void backward(const Var& loss) {
  if (loss.value().numel() != 1) throw Error("backward() needs a one-element loss, got " + shape_str(loss.shape()));
  loss.accumulate_grad(Tensor::full(loss.shape(), 1.f));
  // Take the tape so that closures recorded during backward (none expected) cannot loop.
  auto tape = std::move(g_tape);
  g_tape.clear();
  for (auto it = tape.rbegin(); it != tape.rend(); ++it) {
    (*it)();
    *it = nullptr;  // free this op's intermediates as soon as it is done
  }
}

}  // namespace heed
