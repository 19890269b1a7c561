#include "tensor/autograd.hpp"

#include "tensor/ops.hpp"
#include "util/error.hpp"

namespace heed {
namespace {
thread_local bool g_grad_enabled = true;
thread_local std::vector<std::function<void()>> g_tape;
// Watched inputs of the op between its needs_grad and its record_backward, and for each tape
// entry the watched leaves it uses (tape index ascending).
thread_local std::vector<VarNode*> g_watched_inputs;
struct WatchedUse {
  size_t tape_index;
  VarNode* node;
};
thread_local std::vector<WatchedUse> g_watched_uses;

// Forgets uses whose entries will not run (a tape dropped or cut short by an exception).
void drop_watched_uses(std::vector<WatchedUse>& uses, size_t keep) {
  for (size_t i = keep; i < uses.size(); ++i) --uses[i].node->pending_uses;
  uses.resize(keep);
}
}  // namespace

Var::Var(Tensor value, bool requires_grad) : node_(std::make_shared<VarNode>()) {
  node_->value = std::move(value);
  node_->requires_grad = requires_grad;
}

void Var::accumulate_grad(const Tensor& g) const {
  if (!node_->requires_grad) return;
  if (node_->grad_complete)
    throw Error("internal error: a gradient reached a watched parameter after backward had finished with it");
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

namespace {
template <class Inputs>
bool needs_grad_of(const Inputs& inputs) {
  if (!g_grad_enabled) return false;
  g_watched_inputs.clear();
  bool needed = false;
  for (const Var* v : inputs)
    if (v->requires_grad()) {
      needed = true;
      if (v->node()->watched) g_watched_inputs.push_back(v->node());
    }
  return needed;
}
}  // namespace

bool needs_grad(std::initializer_list<const Var*> inputs) { return needs_grad_of(inputs); }
bool needs_grad(const std::vector<const Var*>& inputs) { return needs_grad_of(inputs); }

void record_backward(std::function<void()> backward) {
  for (VarNode* node : g_watched_inputs) {
    if (node->pending_uses++ == 0) node->grad_complete = false;
    g_watched_uses.push_back({g_tape.size(), node});
  }
  g_watched_inputs.clear();
  g_tape.push_back(std::move(backward));
}
size_t tape_size() { return g_tape.size(); }
void clear_tape() {
  g_tape.clear();
  drop_watched_uses(g_watched_uses, 0);
}

void watch_gradient(const Var& leaf) { leaf.node()->watched = true; }

void backward(const Var& loss, const std::function<void(VarNode*)>& on_complete,
              const std::function<void()>& between_entries) {
  if (loss.value().numel() != 1) throw Error("backward() needs a one-element loss, got " + shape_str(loss.shape()));
  // Take the tape so that closures recorded during backward (none expected) cannot loop.
  auto tape = std::move(g_tape);
  auto uses = std::move(g_watched_uses);
  g_tape.clear();
  g_watched_uses.clear();
  size_t next_use = uses.size();  // uses[0, next_use) belong to entries not yet run
  try {
    loss.accumulate_grad(Tensor::full(loss.shape(), 1.f));
    for (size_t i = tape.size(); i-- > 0;) {
      tape[i]();
      tape[i] = nullptr;  // free this op's intermediates as soon as it is done
      while (next_use > 0 && uses[next_use - 1].tape_index == i) {
        VarNode* node = uses[--next_use].node;
        if (--node->pending_uses > 0) continue;
        node->grad_complete = true;
        if (on_complete) on_complete(node);
      }
      if (between_entries) between_entries();
    }
  } catch (...) {
    uses.resize(next_use);
    drop_watched_uses(uses, 0);
    throw;
  }
}

}  // namespace heed
