// Padding must not change a sentence's results: its encoder states, loss and parameter gradients
// are the same (to float rounding) when it is translated alone and when it sits, padded, in a
// batch with longer sentences — for every architecture. The NTM carries its whole state (memory,
// head weights, controller) unchanged over a sentence's padded source positions. For the GRU this also proves that the
// right-to-left encoder starts at each sentence's own last token (</s>), not at the padding.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>

#include "../fixtures/tiny_models.hpp"
#include "models/factory.hpp"
#include "tensor/ops.hpp"

using namespace heed;

namespace {

struct SentenceResult {
  Tensor states;  // [S_real, D]: encoder states of the sentence's real positions
  float loss = 0;
  std::map<std::string, Tensor> grads;
};

// Loss and gradients of sentence `row` of `batch` only: the other rows' labels are ignored
// (id 0) and the loss is divided by this sentence's label count.
SentenceResult run_sentence(Seq2Seq& model, const Batch& batch, int row) {
  SentenceResult r;
  {
    NoGradGuard no_grad;
    Tensor states = model.encode(batch).states.value();
    const int64_t S = batch.src_len, D = states.dim(2), real = batch.src_lengths[row];
    r.states = Tensor::empty({real, D});
    std::copy(states.data() + row * S * D, states.data() + (row * S + real) * D, r.states.data());
    if (model.arch() == "gru-bahdanau")  // the packed GRU leaves pad positions at exactly 0
      for (int64_t i = (row * S + real) * D; i < (row + 1) * S * D; ++i) CHECK(states.data()[i] == 0.f);
  }
  std::vector<int32_t> targets(batch.tgt_out.size(), 0);
  for (int t = 0; t < batch.tgt_len; ++t) targets[row * batch.tgt_len + t] = batch.tgt_out[row * batch.tgt_len + t];
  model.parameters().zero_grad();
  Var logits = model.forward(batch);
  Var loss = cross_entropy(reshape(logits, {-1, model.target_vocab()}), targets, 0, 0.1f,
                           static_cast<float>(batch.tgt_lengths[row]));
  r.loss = loss.value().item();
  backward(loss);
  for (const auto& [name, var] : model.parameters().all()) r.grads[name] = var.grad().clone();
  return r;
}

void check_padding_invariance(Arch arch) {
  const int V = 31;
  auto model = make_model(test::tiny_model_config(arch), V, V, 17);
  model->set_training(true);
  const std::vector<int32_t> src = {5, 6, 7, 8}, tgt = {9, 10, 11};
  Batch alone = make_batch({src}, {tgt});
  Batch padded = make_batch({{12, 13, 14, 15, 16, 17, 18, 19, 20}, src, {21, 22, 23, 24, 25, 26}},
                            {{4, 5, 6, 7, 8, 9, 10}, tgt, {12, 13, 14, 15, 16}});
  REQUIRE(padded.src_len > alone.src_len);
  REQUIRE(padded.tgt_len > alone.tgt_len);

  SentenceResult a = run_sentence(*model, alone, 0);
  SentenceResult p = run_sentence(*model, padded, 1);

  REQUIRE(a.states.shape() == p.states.shape());
  float worst = 0;
  for (int64_t i = 0; i < a.states.numel(); ++i)
    worst = std::max(worst, std::fabs(a.states.data()[i] - p.states.data()[i]));
  INFO("encoder states: max |alone − padded| " << worst);
  CHECK(worst <= 1e-5f);
  CHECK(std::fabs(a.loss - p.loss) <= 1e-6f * std::fabs(a.loss));
  for (const auto& [name, g] : a.grads) {
    const Tensor& h = p.grads.at(name);
    float scale = 0, diff = 0;
    for (int64_t i = 0; i < g.numel(); ++i) {
      scale = std::max(scale, std::fabs(g.data()[i]));
      diff = std::max(diff, std::fabs(g.data()[i] - h.data()[i]));
    }
    INFO("grad " << name << ": max |alone − padded| " << diff << ", max |grad| " << scale);
    CHECK(diff <= 1e-5f * scale + 1e-8f);
  }
}
}  // namespace

TEST_CASE("GRU-Bahdanau results do not depend on padding", "[gru][padding]") {
  check_padding_invariance(Arch::gru_bahdanau);
}

TEST_CASE("Transformer results do not depend on padding", "[transformer][padding]") {
  check_padding_invariance(Arch::transformer);
}

TEST_CASE("NTM results do not depend on padding", "[ntm][padding]") { check_padding_invariance(Arch::ntm); }
