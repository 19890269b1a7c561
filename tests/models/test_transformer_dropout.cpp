// Dropout acts in training mode only, and its masks come from the model's rng (reproducible).
#include <catch2/catch.hpp>

#include "../fixtures/tiny_models.hpp"
#include "models/transformer.hpp"
#include "tensor/ops.hpp"

using namespace heed;

namespace {
ModelConfig tiny(float dropout) {
  ModelConfig c = test::tiny_model_config(Arch::transformer);
  c.dropout = dropout;
  return c;
}

std::vector<float> logits(Seq2Seq& model, const Batch& batch) {
  NoGradGuard no_grad;
  return model.forward(batch).value().to_vector();
}
}  // namespace

TEST_CASE("Transformer dropout applies in training mode only", "[transformer][dropout]") {
  Batch batch = make_batch({{5, 6, 7}, {8, 9}}, {{10, 11}, {12, 13, 14}});
  auto plain = make_transformer(tiny(0), 17, 17, 3);
  auto dropped = make_transformer(tiny(0.3f), 17, 17, 3);  // same seed: same initial parameters
  plain->set_training(true);
  const auto reference = logits(*plain, batch);

  dropped->set_training(false);
  CHECK(logits(*dropped, batch) == reference);

  dropped->set_training(true);
  const auto first = logits(*dropped, batch), second = logits(*dropped, batch);
  CHECK(first != reference);
  CHECK(first != second);  // fresh masks per call

  auto replay = make_transformer(tiny(0.3f), 17, 17, 3);  // same rng seed: the same masks again
  replay->set_training(true);
  CHECK(logits(*replay, batch) == first);
}
