// The generic path of every attention (see attention.hpp), and the dispatch to fused kernels.
#include "nn/attention.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "tensor/ops.hpp"
#include "util/error.hpp"

namespace heed::attention {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

Var drop(const Var& x, const Options& options) {
  if (options.dropout <= 0.f) return x;
  if (!options.rng) throw Error("attention: coefficient dropout needs a random generator");
  return dropout(x, options.dropout, *options.rng);
}

// Scores → α (softmax over the unmasked keys, along the last axis) → dropout, in the scores'
// shape. The mask applies in the key set's frame when it has one.
Var normalise(const Var& scores, const DenseKeys& keys, const Options& options) {
  Var x = keys.frame.empty() ? scores : reshape(scores, keys.frame);
  if (keys.mask.defined()) x = masked_fill(x, keys.mask, kNegInf);
  Var probs = softmax(x);
  if (options.weights) *options.weights = probs.value();
  probs = drop(probs, options);
  return keys.frame.empty() ? probs : reshape(probs, scores.shape());
}

// α [B, S] over values [B, S, D] → [B, D].
Var weighted_sum_one_query(const Var& alpha, const Var& values) {
  const int64_t B = values.dim(0), S = values.dim(1), D = values.dim(2);
  return reshape(matmul(reshape(alpha, {B, 1, S}), values), {B, D});
}

void require(bool ok, const char* what, const Var& values) {
  if (!ok) throw Error(std::string("attention: ") + what + " (values " + shape_str(values.shape()) + ")");
}

}  // namespace

Var attend(const AdditiveScore& score, const DenseKeys& keys, const Var& values, const Options& options) {
  const int64_t B = score.keys.dim(0), S = score.keys.dim(1), A = score.keys.dim(2);
  require(values.ndim() == 3 && values.dim(0) == B && values.dim(1) == S, "additive score keys and values differ",
          values);
  const bool fused_mask = keys.frame.empty() && (!keys.mask.defined() || keys.mask.shape() == Shape{B, S});
  if (!options.generic && fused_mask) {
    Var alpha = softmax(additive_attention_scores(score.query, score.keys, score.v, keys.mask));
    if (options.weights) *options.weights = alpha.value();
    return attention_context(drop(alpha, options), values);
  }
  Var hidden = tanh(add(score.keys, reshape(score.query, {B, 1, A})));  // [B, S, A]
  Var e = reshape(matmul(reshape(hidden, {B * S, A}), reshape(score.v, {A, 1})), {B, S});
  return weighted_sum_one_query(normalise(e, keys, options), values);
}

Var attend(const DotProductScore& score, const DenseKeys& keys, const Var& values, const Options& options) {
  const float inv_sqrt_d = 1.f / std::sqrt(static_cast<float>(score.query.dim(-1)));
  Var scores = matmul(scale(score.query, inv_sqrt_d), score.keys, false, true);  // [G, T, S]
  return matmul(normalise(scores, keys, options), values);
}

Var coefficients(const CosineScore& score, const DenseKeys& keys, const Options& options) {
  const int64_t B = score.keys.dim(0), S = score.keys.dim(1), D = score.keys.dim(2);
  Var cosine = matmul(reshape(l2_normalize(score.query), {B, 1, D}), l2_normalize(score.keys), false, true);
  Var e = mul(reshape(cosine, {B, S}), reshape(score.strength, {B, 1}));
  return normalise(e, keys, options);
}

Var attend(const CosineScore& score, const DenseKeys& keys, const Var& values, const Options& options) {
  require(values.ndim() == 3 && values.dim(0) == score.keys.dim(0) && values.dim(1) == score.keys.dim(1),
          "cosine score keys and values differ", values);
  return weighted_sum_one_query(coefficients(score, keys, options), values);
}

Var attend(const GraphScore& score, const DenseKeys& keys, const Var& values, const Options& options) {
  const int64_t N = score.source.dim(0), H = score.source.dim(1), F = values.dim(2);
  require(values.ndim() == 3 && values.dim(0) == N && values.dim(1) == H, "graph scores and values differ", values);
  Var s = reshape(permute(score.source, {1, 0}), {H, N, 1});
  Var t = reshape(permute(score.target, {1, 0}), {H, 1, N});
  Var e = leaky_relu(add(add(Var(Tensor::zeros({H, N, N})), s), t), score.negative_slope);  // [H, N, N]
  Var mixed = matmul(normalise(e, keys, options), permute(values, {1, 0, 2}));              // [H, N, F]
  return reshape(permute(mixed, {1, 0, 2}), {N, H, F});
}

Var attend(const GraphScore& score, const NeighbourKeys& keys, const Var& values, const Options& options) {
  if (!keys.lists) throw Error("attention: no neighbour lists");
  const Csr& c = *keys.lists;
  if (!options.generic) {
    if (options.dropout > 0.f && !options.rng) throw Error("attention: coefficient dropout needs a random generator");
    Rng unused;  // graph_attention draws nothing without dropout
    return graph_attention(score.source, score.target, values, c, score.negative_slope, options.dropout,
                           options.rng ? *options.rng : unused, options.weights);
  }
  const int64_t E = c.nnz(), H = score.source.dim(1), F = values.dim(2);
  Var e = leaky_relu(add(embedding(score.source, c.row, {E}), embedding(score.target, c.column, {E})),
                     score.negative_slope);  // [E, H]
  Var alpha = segment_softmax(e, c);
  if (options.weights) *options.weights = alpha.value();
  alpha = drop(alpha, options);
  Var neighbour_values = reshape(embedding(reshape(values, {c.cols, H * F}), c.column, {E}), {E, H, F});
  return segment_sum(mul(neighbour_values, reshape(alpha, {E, H, 1})), c);
}

}  // namespace heed::attention
