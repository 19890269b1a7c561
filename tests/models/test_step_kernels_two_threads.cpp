// The decoders' own attention kernels on two threads. ctest runs every test with OMP_NUM_THREADS=1
// (tests/CMakeLists.txt), and cached_attention (Transformer steps) and additive_attention_step (GRU
// steps) split their rows over threads only above a size threshold, so the rest of the suite never
// runs their multi-threaded branches. Here each kernel runs on inputs above its threshold once on
// one thread and once on two, and the outputs must be bitwise equal: each row is one thread's,
// computed by the same code. Then a GRU and a Transformer decode the same steps (beams expanded,
// reordered like a beam search's, then permuted across sentences) on one thread and on two, sized
// so that the kernels run above their thresholds from the second step on (the Transformer's
// self-attention from its 17th position on); see the tolerance there.
#include <catch2/catch.hpp>
#include <memory>
#include <vector>

#include "../fixtures/tiny_models.hpp"
#include "../two_threads.hpp"
#include "models/additive_attention_step.hpp"
#include "models/cached_attention.hpp"
#include "models/factory.hpp"
#include "tensor/random.hpp"

using namespace heed;
using heed::test::first_difference;
using heed::test::max_relative_difference;
using heed::test::ThreadCountGuard;
using heed::test::use_threads;

namespace {

// The thresholds as the kernels define them: a second thread joins above these.
constexpr int64_t kCachedAttention = 1 << 16;  // cached_attention.cpp: N · heads · len · d_h > this
constexpr int64_t kAdditiveAttention = 65536;  // additive_attention_step.cpp: N · S · A and N · S · Dv > this
constexpr int kVocab = 40;

Tensor random_values(const Shape& shape, uint64_t seed, float lo = -1.f, float hi = 1.f) {
  Tensor t = Tensor::empty(shape);
  Rng rng(seed);
  rng.fill_uniform(t, lo, hi);
  return t;
}

// Eight sentences of 19, 17, …, 5 tokens: S = 20 positions with </s>, padding in all but the first.
Batch eight_sentences() {
  std::vector<std::vector<int32_t>> src;
  for (int b = 0; b < 8; ++b) {
    std::vector<int32_t> s;
    for (int j = 0; j < 19 - 2 * b; ++j) s.push_back(4 + (b * 7 + j * 3) % (kVocab - 4));
    src.push_back(s);
  }
  return make_batch(src, {});
}

struct Steps {
  std::vector<float> logits, attention;  // every step's, in order
};

// Step 0 on the sentences, then `beams` rows per sentence (reorder, as beam search expands), at
// steps/3 a beam-like reorder (each sentence's first beams/2 rows twice, the others dropped), at
// 2·steps/3 a permutation across sentences (a sentence's rows no longer next to each other).
Steps decode_steps(Seq2Seq& model, const Batch& batch, int beams, int steps, int threads) {
  use_threads(threads);
  NoGradGuard no_grad;
  model.set_training(false);
  std::unique_ptr<DecoderState> state = model.start(model.encode(batch));
  const int N = batch.size * beams;
  Steps out;
  for (int t = 0; t < steps; ++t) {
    std::vector<int32_t> previous(state->rows, kBosId);
    for (int i = 0; t > 0 && i < state->rows; ++i) previous[i] = 4 + (t * 5 + i) % (kVocab - 4);
    const StepOutput step = model.step(*state, previous);
    const std::vector<float> logits = step.logits.to_vector(), attention = step.attention.to_vector();
    out.logits.insert(out.logits.end(), logits.begin(), logits.end());
    out.attention.insert(out.attention.end(), attention.begin(), attention.end());
    if (t != 0 && t != steps / 3 && t != 2 * steps / 3) continue;
    std::vector<int32_t> rows(N);
    for (int i = 0; i < N; ++i)
      rows[i] = t == 0 ? i / beams : t == steps / 3 ? (i / beams) * beams + (i % beams) / 2 : (i * 37) % N;
    model.reorder(*state, rows);
  }
  return out;
}

// The same steps on one thread and on two. Not bitwise: every kernel's input comes out of oneDNN
// products (embeddings aside: the encoder, the step weights' products, the vocabulary
// projection), whose primitives are made per thread count (dnnl_context.cpp) and may block or
// split their sums differently on two threads. So within 1e-4 of the largest |logit| (a
// reordered float sum differs by ~1e-6; a row lost, repeated or swapped between threads by O(1)).
// The kernels alone are compared bitwise in the first two test cases.
void require_steps_thread_independent(Seq2Seq& model, int beams, int steps) {
  const Batch batch = eight_sentences();
  const Steps one = decode_steps(model, batch, beams, steps, 1), two = decode_steps(model, batch, beams, steps, 2);
  const size_t rows = batch.size + static_cast<size_t>(steps - 1) * batch.size * beams;  // every step's rows
  REQUIRE(one.logits.size() == rows * kVocab);
  REQUIRE(one.attention.size() == rows * batch.src_len);
  REQUIRE(two.logits.size() == one.logits.size());
  REQUIRE(two.attention.size() == one.attention.size());
  CHECK(max_relative_difference(one.logits, two.logits) <= 1e-4);
  CHECK(max_relative_difference(one.attention, two.attention) <= 1e-4);
}

}  // namespace

TEST_CASE("cached_attention over scattered rows with pads and head means: bitwise the same on one thread and on two",
          "[attention][threads]") {
  ThreadCountGuard restore;
  const int64_t N = 48, heads = 4, dh = 16, len = 30, width = heads * dh, buffer_rows = 6;
  const int64_t stride = width + 3, q_stride = width + 5;  // padded rows: both strides are honoured
  REQUIRE(N * heads * len * dh > kCachedAttention);
  std::vector<Tensor> key_rows, value_rows;
  std::vector<const float*> keys, values;
  for (int64_t j = 0; j < len; ++j) {
    key_rows.push_back(random_values({buffer_rows, stride}, 100 + j, -2.f, 2.f));
    value_rows.push_back(random_values({buffer_rows, stride}, 200 + j));
    keys.push_back(key_rows.back().data());
    values.push_back(value_rows.back().data());
  }
  std::vector<int32_t> rows(N * len);  // beams reading other rows' history, as after a reorder
  for (int64_t i = 0; i < N * len; ++i) rows[i] = static_cast<int32_t>((i * 7 + i / len) % buffer_rows);
  std::vector<float> pad(N * len, 0.f);  // a few pads per row, never position 0
  for (int64_t n = 0; n < N; ++n)
    for (int64_t j = 1; j < len; j += 3) pad[n * len + j] = (n + j) % 2 ? 1.f : 0.f;
  const Tensor q = random_values({N, q_stride}, 1);
  auto run = [&](int threads) {
    use_threads(threads);
    std::vector<float> out(N * width), mean(N * len);
    cached_attention(q.data(), q_stride, N, heads, dh,
                     AttentionMemory{keys.data(), values.data(), rows.data(), stride, len}, pad.data(), out.data(),
                     mean.data());
    out.insert(out.end(), mean.begin(), mean.end());
    return out;
  };
  const std::vector<float> one = run(1), two = run(2);
  CHECK(first_difference(one, two) == -1);
}

TEST_CASE("additive_attention_step with beams sharing encoder rows: bitwise the same on one thread and on two",
          "[attention][threads]") {
  ThreadCountGuard restore;
  const int64_t B = 8, S = 24, A = 64, Dv = 70;  // Dv: a column block of 64 and a tail
  std::vector<int32_t> source_row;               // sentence b has 2 + 5b mod 9 rows (2 to 10 each)
  for (int32_t b = 0; b < B; ++b)
    for (int32_t k = 0; k < 2 + (5 * b) % 9; ++k) source_row.push_back(b);
  const int64_t N = static_cast<int64_t>(source_row.size());  // 48
  REQUIRE(N * S * A > kAdditiveAttention);                    // scores and weights
  REQUIRE(N * S * Dv > kAdditiveAttention);                   // contexts
  const Tensor keys = random_values({B, S, A}, 1), v = random_values({A}, 2), values = random_values({B, S, Dv}, 3);
  const Tensor query = random_values({N, A}, 4), start = random_values({N, Dv}, 5);
  Tensor pad = Tensor::zeros({B, S});  // sentence b: S − 2b real positions (masked ones are skipped)
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = S - 2 * b; j < S; ++j) pad.data()[b * S + j] = 1.f;
  auto run = [&](int threads) {
    use_threads(threads);
    Tensor alpha, context = start.clone();
    additive_attention_step(query, keys, v, values, pad, source_row, alpha, context);
    std::vector<float> out = alpha.to_vector();
    const std::vector<float> sums = context.to_vector();
    out.insert(out.end(), sums.begin(), sums.end());
    return out;
  };
  const std::vector<float> one = run(1), two = run(2);
  REQUIRE(one.size() == static_cast<size_t>(N * (S + Dv)));
  CHECK(first_difference(one, two) == -1);
}

TEST_CASE("GRU steps (additive_attention_step) with beams: the same on one thread and on two", "[gru][step][threads]") {
  ThreadCountGuard restore;
  ModelConfig c = test::tiny_model_config(Arch::gru_bahdanau);
  c.gru.attn_dim = 64;
  c.gru.dec_hidden = 32;
  c.gru.readout_dim = 16;
  const int beams = 8, steps = 12;
  const int64_t N = 8 * beams, S = eight_sentences().src_len, A = c.gru.attn_dim;
  const int64_t Dv = 3 * c.gru.dec_hidden + c.gru.readout_dim;  // the step's projected annotations
  REQUIRE(N * S * A > kAdditiveAttention);                      // every step after the first
  REQUIRE(N * S * Dv > kAdditiveAttention);
  auto model = make_model(c, kVocab, kVocab, 21);
  require_steps_thread_independent(*model, beams, steps);
}

TEST_CASE("Transformer steps (cached_attention) with beams: the same on one thread and on two",
          "[transformer][step][threads]") {
  ThreadCountGuard restore;
  ModelConfig c = test::tiny_model_config(Arch::transformer);
  c.transformer.d_model = 64;
  c.transformer.heads = 4;
  const int beams = 8, steps = 24;
  const int64_t N = 8 * beams, S = eight_sentences().src_len, d = c.transformer.d_model;
  REQUIRE(N * d * S > kCachedAttention);  // cross-attention: every step after the first
  // Self-attention over the step's position and the earlier ones: above from 17 positions on.
  REQUIRE(N * d * 17 > kCachedAttention);
  REQUIRE(steps > 17);
  auto model = make_model(c, kVocab, kVocab, 22);
  require_steps_thread_independent(*model, beams, steps);
}
