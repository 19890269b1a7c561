// Finite-difference check of every parameter gradient of a whole tiny GRU-Bahdanau model (vocab
// 11, emb 5, hidden 7, two sentences of different lengths), with separate and tied output
// layers, two encoder layers in one case. Method and tolerance: model_gradcheck.hpp.
#include <catch2/catch.hpp>

#include <cstdio>

#include "model_gradcheck.hpp"
#include "models/gru_bahdanau.hpp"

using namespace heed;

namespace {
void check_gru(bool tied, int enc_layers) {
  ModelConfig c;
  c.dropout = 0;
  c.gru.emb_dim = 5;
  c.gru.enc_hidden = 7;
  c.gru.dec_hidden = 7;
  c.gru.attn_dim = 6;
  c.gru.readout_dim = 5;
  c.gru.enc_layers = enc_layers;
  c.gru.tie_output = tied;
  const int V = 11;
  auto model = make_gru_bahdanau(c, V, V, 3);
  Batch batch = make_batch({{4, 5, 6, 7, 8}, {9, 10}}, {{5, 4, 10}, {4, 6}});
  const double worst = gradcheck::check_model_gradients(*model, batch);
  std::printf("gru gradcheck (tied %d, layers %d): max scaled error %.2e\n", tied, enc_layers, worst);
}
}  // namespace

TEST_CASE("GRU-Bahdanau gradients match finite differences", "[gru][gradcheck]") {
  SECTION("separate output layer") { check_gru(false, 1); }
  SECTION("tied output layer, two encoder layers") { check_gru(true, 2); }
}
