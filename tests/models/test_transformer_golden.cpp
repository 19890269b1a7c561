// The Transformer against the PyTorch reference, tensor by tensor (tests/fixtures/golden/README.md):
// logits 1e-5 absolute, loss 1e-6 relative, every gradient max|diff| ≤ 1e-4·max|golden| + 1e-8;
// and the closed-form parameter count against the reference's formula and its files.
#include <catch2/catch.hpp>

#include "golden.hpp"
#include "models/factory.hpp"
#include "models/transformer.hpp"
#include "tensor/ops.hpp"
#include "util/error.hpp"

using namespace heed;

namespace {
ModelConfig config_from(const SafeTensorFile& f) {
  ModelConfig c;
  c.arch = Arch::transformer;
  c.dropout = 0;
  c.transformer.d_model = golden::meta_int(f, "d_model");
  c.transformer.heads = golden::meta_int(f, "heads");
  c.transformer.ffn_dim = golden::meta_int(f, "ffn");
  c.transformer.enc_layers = golden::meta_int(f, "enc_layers");
  c.transformer.dec_layers = golden::meta_int(f, "dec_layers");
  c.transformer.pre_norm = f.metadata.at("pre_norm") == "true" || f.metadata.at("pre_norm") == "True";
  c.share_embeddings = f.metadata.at("share_all_embeddings") == "true";
  return c;
}

void check_golden(const std::string& name) {
  auto f = golden::load(name);
  const int V = golden::meta_int(f, "vocab_size");
  ModelConfig config = config_from(f);
  auto model = make_transformer(config, V, V, 1);
  const int64_t params = std::stoll(f.metadata.at("params"));
  REQUIRE(model->parameters().count() == params);
  REQUIRE(transformer_parameter_count(config, V, V) == params);
  size_t golden_params = 0;  // every param.* of the file is one of ours (ours are all loaded below)
  for (const auto& [tname, t] : f.tensors) golden_params += tname.rfind("param.", 0) == 0;
  REQUIRE(golden_params == model->parameters().all().size());
  golden::load_parameters(*model, f);
  Batch batch = golden::batch(f);
  model->set_training(true);

  EncoderOutput enc = model->encode(batch);
  golden::require_close("encoder output", enc.states.value(), f.at("out.enc"), 0, 1e-5f);
  clear_tape();

  Var logits = model->forward(batch);
  golden::require_close("logits", logits.value(), f.at("out.logits"), 0, 1e-5f);
  const int64_t N = batch.num_labels();
  REQUIRE(N == 15);
  CrossEntropyStats stats;
  Var loss = cross_entropy(reshape(logits, {-1, V}), batch.tgt_out, 0, 0.1f, static_cast<float>(N), &stats);
  const float golden_loss = f.at("out.loss").as_f32()[0];
  CHECK(std::fabs(loss.value().item() - golden_loss) <= 1e-6f * golden_loss);
  const float golden_nll = f.at("out.nll").as_f32()[0];
  CHECK(std::fabs(stats.nll_sum / N - golden_nll) <= 1e-6 * golden_nll);

  backward(loss);
  for (const auto& [pname, var] : model->parameters().all())
    golden::require_close("grad." + pname, var.grad(), f.at("grad." + pname), 1e-4f, 1e-8f);
}
}  // namespace

TEST_CASE("Transformer matches the PyTorch reference tensor by tensor", "[transformer][golden]") {
  SECTION("transformer-tiny (post-norm)") { check_golden("transformer-tiny"); }
  SECTION("transformer-tiny-prenorm") { check_golden("transformer-tiny-prenorm"); }
}

TEST_CASE("Transformer parameter count equals the reference formula", "[transformer]") {
  ModelConfig c;
  c.arch = Arch::transformer;
  SECTION("defaults, V = 8000: the reference README's 9,625,600") {
    CHECK(transformer_parameter_count(c, 8000, 8000) == 9625600);
    CHECK(model_parameter_count(c, 8000, 8000) == 9625600);
  }
  SECTION("V = 32000: 21,913,600") { CHECK(transformer_parameter_count(c, 32000, 32000) == 21913600); }
  SECTION("the built models agree with the formula") {
    c.transformer.d_model = 12;
    c.transformer.heads = 3;
    c.transformer.ffn_dim = 20;
    c.transformer.enc_layers = 2;
    c.transformer.dec_layers = 1;
    for (bool pre_norm : {false, true})
      for (bool shared : {false, true}) {
        c.transformer.pre_norm = pre_norm;
        c.share_embeddings = shared;
        const int src_vocab = 31, tgt_vocab = shared ? 31 : 17;
        auto model = make_model(c, src_vocab, tgt_vocab, 3);
        INFO("pre_norm " << pre_norm << " shared " << shared);
        CHECK(model->parameters().count() == transformer_parameter_count(c, src_vocab, tgt_vocab));
        CHECK(model->parameters().contains("tgt_emb.weight"));
        CHECK(model->parameters().contains("encoder.norm.weight") == pre_norm);
      }
  }
  SECTION("share_embeddings with two vocabularies is a usage error") {
    c.share_embeddings = true;
    CHECK_THROWS_AS(make_model(c, 30, 20, 1), UsageError);
  }
}
