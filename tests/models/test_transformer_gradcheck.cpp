// Finite-difference check of every parameter gradient of a whole tiny Transformer, post-norm and
// pre-norm (method and tolerance: model_gradcheck.hpp). GELU, because ReLU's kink makes a
// difference quotient wrong wherever a pre-activation lies within h of 0 (ReLU itself is checked
// by the golden test and by the op's own gradient check). Measured worst scaled errors: 3.1e-3
// (post-norm), 1.4e-3 (pre-norm).
#include <catch2/catch.hpp>

#include <cstdio>

#include "model_gradcheck.hpp"
#include "models/transformer.hpp"

using namespace heed;

namespace {
void check_transformer(bool pre_norm) {
  ModelConfig c;
  c.arch = Arch::transformer;
  c.dropout = 0;
  c.transformer.d_model = 4;
  c.transformer.heads = 2;
  c.transformer.ffn_dim = 6;
  c.transformer.enc_layers = 1;
  c.transformer.dec_layers = 2;
  c.transformer.pre_norm = pre_norm;
  c.transformer.activation = FeedForwardActivation::gelu;
  const int V = 7;
  auto model = make_transformer(c, V, V, 5);
  Batch batch = make_batch({{4, 5, 6}, {6}}, {{5, 4}, {4, 6, 6, 5}});
  const double worst = gradcheck::check_model_gradients(*model, batch);
  std::printf("transformer gradcheck (pre_norm %d): max scaled error %.2e\n", pre_norm, worst);
}
}  // namespace

TEST_CASE("Transformer gradients match finite differences, post-norm", "[transformer][gradcheck]") {
  check_transformer(false);
}

TEST_CASE("Transformer gradients match finite differences, pre-norm", "[transformer][gradcheck]") {
  check_transformer(true);
}
