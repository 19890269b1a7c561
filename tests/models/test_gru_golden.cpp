// The GRU model against the PyTorch reference, tensor by tensor (tests/fixtures/golden/README.md):
// logits 1e-5 absolute, loss 1e-6 relative, every gradient max|diff| ≤ 1e-4·max|golden| + 1e-8.
#include <catch2/catch.hpp>

#include "golden.hpp"
#include "models/gru_bahdanau.hpp"
#include "tensor/ops.hpp"

using namespace heed;

namespace {
ModelConfig config_from(const SafeTensorFile& f) {
  ModelConfig c;
  c.arch = Arch::gru_bahdanau;
  c.dropout = 0;
  c.gru.emb_dim = golden::meta_int(f, "emb");
  c.gru.enc_hidden = golden::meta_int(f, "enc_hidden");
  c.gru.dec_hidden = golden::meta_int(f, "dec_hidden");
  c.gru.attn_dim = golden::meta_int(f, "attn_dim");
  c.gru.readout_dim = golden::meta_int(f, "readout_dim");
  c.gru.readout_act = f.metadata.at("readout_act") == "linear" ? ReadoutActivation::linear : ReadoutActivation::tanh;
  c.gru.tie_output = f.metadata.at("tie_output") == "True" || f.metadata.at("tie_output") == "true";
  return c;
}

void check_golden(const std::string& name) {
  auto f = golden::load(name);
  const int V = golden::meta_int(f, "vocab_size");
  ModelConfig config = config_from(f);
  auto model = make_gru_bahdanau(config, V, V, 1);
  REQUIRE(model->parameters().count() == std::stoll(f.metadata.at("params")));
  REQUIRE(gru_bahdanau_parameter_count(config, V, V) == std::stoll(f.metadata.at("params")));
  golden::load_parameters(*model, f);
  Batch batch = golden::batch(f);
  model->set_training(true);

  EncoderOutput enc = model->encode(batch);
  golden::require_close("encoder states", enc.states.value(), f.at("out.enc"), 0, 1e-5f);
  clear_tape();

  Var logits = model->forward(batch);
  golden::require_close("logits", logits.value(), f.at("out.logits"), 0, 1e-5f);
  golden::require_close("attention", model->last_attention(), f.at("out.attention"), 0, 1e-5f);
  const int64_t N = batch.num_labels();
  CrossEntropyStats stats;
  Var loss = cross_entropy(reshape(logits, {-1, V}), batch.tgt_out, 0, 0.1f, static_cast<float>(N), &stats);
  const float golden_loss = f.at("out.loss").as_f32()[0];
  CHECK(std::fabs(loss.value().item() - golden_loss) <= 1e-6f * golden_loss);
  CHECK(std::fabs(stats.nll_sum / N - f.at("out.nll").as_f32()[0]) <= 1e-6 * f.at("out.nll").as_f32()[0]);

  backward(loss);
  for (const auto& [pname, var] : model->parameters().all())
    golden::require_close("grad." + pname, var.grad(), f.at("grad." + pname), 1e-4f, 1e-8f);
}
}  // namespace

TEST_CASE("GRU-Bahdanau matches the PyTorch reference tensor by tensor", "[gru][golden]") {
  SECTION("gru-tiny") { check_golden("gru-tiny"); }
  SECTION("gru-tiny-tied") { check_golden("gru-tiny-tied"); }
}
