// Autograd's gradient-completion notice (data-parallel training starts summing a parameter's
// gradient over processes there): it comes for each watched leaf right after the last tape
// entry that uses it, with the gradient already final; counts start afresh for each backward
// (gradient accumulation); and a gradient arriving after the notice throws instead of being lost.
#include <catch2/catch.hpp>

#include <map>

#include "tensor/ops.hpp"

using namespace heed;

namespace {
Var parameter(const Shape& shape, float start) {
  std::vector<float> values(shape[0] * shape[1]);
  for (size_t i = 0; i < values.size(); ++i) values[i] = start + 0.1f * static_cast<float>(i);
  return Var(Tensor::from_vector(shape, values), true);
}

std::vector<float> values_of(const Tensor& t) { return std::vector<float>(t.data(), t.data() + t.numel()); }
}  // namespace

TEST_CASE("on_complete: each watched leaf once, in backward order, its gradient already final") {
  Var x(Tensor::from_vector({2, 3}, {1, 2, 3, -1, 0.5f, 2}));
  Var w1 = parameter({3, 4}, -0.5f), w2 = parameter({4, 2}, 0.2f), w3 = parameter({3, 2}, 0.1f);
  for (const Var* w : {&w1, &w2, &w3}) watch_gradient(*w);
  // w3 is used first in forward, w1 then w2: backward finishes w2 first, then w1, and w3 last.
  Var skip = matmul(x, w3);
  Var h = tanh(matmul(x, w1));
  Var loss = sum(add(matmul(h, w2), skip));

  std::vector<const VarNode*> order;
  std::map<const VarNode*, std::vector<float>> at_notice;
  backward(loss, [&](VarNode* node) {
    order.push_back(node);
    at_notice[node] = values_of(node->grad);
  });
  REQUIRE(order == std::vector<const VarNode*>{w2.node(), w1.node(), w3.node()});
  for (const Var* w : {&w1, &w2, &w3}) CHECK(at_notice.at(w->node()) == values_of(w->grad()));
}

TEST_CASE("on_complete: a leaf used several times completes after its earliest use") {
  Var x(Tensor::from_vector({1, 2}, {0.3f, -0.7f}));
  Var w = parameter({2, 2}, 0.4f);
  watch_gradient(w);
  Var h = matmul(x, w);        // first use
  Var y = matmul(tanh(h), w);  // second use
  Var loss = sum(mul(y, y));
  int notices = 0;
  std::vector<float> at_notice;
  backward(loss, [&](VarNode* node) {
    ++notices;
    at_notice = values_of(node->grad);
  });
  CHECK(notices == 1);
  CHECK(at_notice == values_of(w.grad()));
}

TEST_CASE("on_complete: counts start afresh for each backward (gradient accumulation)") {
  Var x(Tensor::from_vector({1, 2}, {1, 2}));
  Var w = parameter({2, 2}, 0.f);
  watch_gradient(w);
  for (int pass = 0; pass < 3; ++pass) {
    Var loss = sum(tanh(matmul(x, w)));
    int notices = 0;
    backward(loss, [&](VarNode*) { ++notices; });
    CHECK(notices == 1);
    CHECK(w.node()->pending_uses == 0);
  }
  // a tape dropped without backward leaves no use behind
  Var unused = sum(matmul(x, w));
  CHECK(w.node()->pending_uses == 1);
  clear_tape();
  CHECK(w.node()->pending_uses == 0);
}

TEST_CASE("a gradient that reaches a watched leaf after its notice throws") {
  Var x(Tensor::from_vector({1, 2}, {1, 2}));
  Var w = parameter({2, 2}, 0.f);
  watch_gradient(w);
  // An op that updates w's gradient but leaves w out of needs_grad, recorded before a proper use
  // of w: backward runs the proper use first, declares w complete, then meets the stray update.
  Var y(Tensor::from_vector({1, 1}, {1}), true);
  if (needs_grad({&y})) record_backward([w] { w.accumulate_grad(Tensor::full({2, 2}, 1.f)); });
  Var loss = add(sum(matmul(x, w)), sum(y));
  CHECK_THROWS_WITH(backward(loss, [](VarNode*) {}), Catch::Contains("after backward had finished with it"));
  CHECK(w.node()->pending_uses == 0);
}

TEST_CASE("concat counts a watched leaf in any part, not only in the first that needs a gradient") {
  Var x(Tensor::from_vector({1, 2}, {0.5f, -1}));
  Var a = parameter({2, 2}, 1.f);  // needs a gradient, not watched: concat's first part
  Var w = parameter({2, 2}, 0.3f);
  watch_gradient(w);
  Var joined = concat({a, w}, 0);  // w in the second part
  Var later = matmul(x, w);        // a use of w recorded after it: backward runs it first
  Var loss = add(sum(mul(joined, joined)), sum(later));
  int notices = 0;
  std::vector<float> at_notice;
  backward(loss, [&](VarNode* node) {
    if (node != w.node()) return;
    ++notices;
    at_notice = values_of(node->grad);
  });
  CHECK(notices == 1);
  CHECK(at_notice == values_of(w.grad()));
  // d/dw of sum(w∘w) + sum(x·w): 2w + xᵀ·1
  const std::vector<float> expected = {2 * 0.3f + 0.5f, 2 * 0.4f + 0.5f, 2 * 0.5f - 1, 2 * 0.6f - 1};
  for (size_t i = 0; i < expected.size(); ++i) CHECK(values_of(w.grad())[i] == Approx(expected[i]));
}
