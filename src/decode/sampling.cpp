#include "decode/sampling.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "tensor/random.hpp"
#include "util/error.hpp"
#include "util/parallel.hpp"

namespace heed {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr int64_t kParallelRows = 1 << 16;  // logits worth a second thread (as in beam search)

// One sample being drawn: the row it occupies in the decoder state follows its place in `rows`.
struct Draw {
  int sentence, sample;
  uint64_t stream;  // key of its counter-based random stream
  std::vector<int32_t> tokens;
  float log_prob = 0;
  std::vector<std::vector<float>> attention;
};

// Uniform in [0, 1) with 53 random bits: draw t of a sample's stream.
double uniform(uint64_t stream, int t) {
  return static_cast<double>(splitmix64(stream + static_cast<uint64_t>(t)) >> 11) * 0x1.0p-53;
}

}  // namespace

int32_t draw_token(const float* logits, int vocab, const std::vector<char>& allowed, const DecodingConfig& decoding,
                   double u) {
  std::vector<std::pair<float, int32_t>> tokens;  // (logit, token), allowed and finite
  for (int v = 0; v < vocab; ++v) {
    if (std::isnan(logits[v])) return -1;
    if (allowed[v] && logits[v] > kNegInf) tokens.push_back({logits[v], v});
  }
  if (tokens.empty()) return -1;
  const Sampling& sampling = decoding.sampling;
  // Most likely first; equal logits by token id, so the set and its order are well defined.
  const auto more_likely = [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  };
  if (sampling.kind == SamplingKind::top_k) {
    const size_t k = std::min(tokens.size(), static_cast<size_t>(sampling.top_k));
    std::partial_sort(tokens.begin(), tokens.begin() + k, tokens.end(), more_likely);
    tokens.resize(k);
  } else if (sampling.kind == SamplingKind::top_p) {
    std::sort(tokens.begin(), tokens.end(), more_likely);
  }
  float top = kNegInf;
  for (const auto& t : tokens) top = std::max(top, t.first);
  std::vector<double> weights(tokens.size());
  double total = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    weights[i] = std::exp(static_cast<double>(tokens[i].first - top) / decoding.temperature);
    total += weights[i];
  }
  size_t kept = tokens.size();
  if (sampling.kind == SamplingKind::top_p) {
    // The fewest most likely tokens whose probability reaches p.
    double mass = 0;
    for (kept = 0; kept < tokens.size();) {
      mass += weights[kept++];
      if (mass >= sampling.top_p * total) break;
    }
    total = mass;
  }
  const double target = u * total;
  double cumulative = 0;
  for (size_t i = 0; i < kept; ++i) {
    cumulative += weights[i];
    if (target < cumulative) return tokens[i].second;
  }
  return tokens[kept - 1].second;  // u * total rounded up to the sum
}

std::vector<std::vector<Hypothesis>> sample(Seq2Seq& model, const Batch& batch, const DecodingConfig& decoding,
                                            bool keep_attention, const SearchConstraints& constraints) {
  if (batch.size == 0) return {};
  if (decoding.sampling.kind == SamplingKind::none) throw Error("sample: decoding.sampling is none");
  const int vocab = model.target_vocab();
  constraints.check(batch.size, vocab);
  const EvalMode eval(model);
  NoGradGuard no_grad;

  const std::vector<char> allowed = allowed_tokens(vocab, decoding);
  const int samples = decoding.nbest;
  std::vector<int> limit(batch.size);
  std::vector<Draw> rows;
  std::vector<int32_t> expand;
  for (int b = 0; b < batch.size; ++b) {
    limit[b] =
        search_length_limit(model, batch.src_lengths[b] - 1, static_cast<int>(constraints.prefix(b).size()), decoding);
    const uint64_t sentence_stream = splitmix64(splitmix64(decoding.sampling_seed) ^ constraints.id(b));
    for (int i = 0; i < samples; ++i) {
      rows.push_back({b, i, splitmix64(sentence_stream + static_cast<uint64_t>(i)), {}, 0.f, {}});
      expand.push_back(b);
    }
  }
  std::unique_ptr<DecoderState> state = model.begin(batch);
  if (samples > 1) model.reorder(*state, expand);

  std::vector<std::vector<std::pair<int, Hypothesis>>> drawn(batch.size);  // (sample, hypothesis)
  const auto finish = [&](Draw& d) {
    Hypothesis h;
    h.log_prob = d.log_prob;
    h.score = d.log_prob == kNegInf
                  ? kNegInf
                  : length_normalised(d.log_prob, static_cast<int>(d.tokens.size()) + 1, decoding.length_penalty);
    h.tokens = std::move(d.tokens);
    h.attention = std::move(d.attention);
    drawn[d.sentence].push_back({d.sample, std::move(h)});
  };

  const int memory = model.memory_rows();
  std::vector<int32_t> previous(rows.size(), kBosId), chosen;
  std::vector<float> gained;
  for (int t = 0; !rows.empty(); ++t) {
    StepOutput out = model.step(*state, previous);
    const Tensor logits = step_logits(out, rows.size(), vocab, "sampling");
    const Tensor attention = keep_attention && out.attention.defined() ? out.attention.contiguous() : Tensor();

    const int64_t n = static_cast<int64_t>(rows.size());
    chosen.assign(n, -1);
    gained.assign(n, kNegInf);
    ParallelFailure failure;  // draw_token allocates
#pragma omp parallel for schedule(static) if (n * vocab >= kParallelRows)
    for (int64_t r = 0; r < n; ++r) {
      failure.capture([&] {
        const Draw& d = rows[r];
        const float* row = logits.data() + r * vocab;
        const std::vector<int32_t>& prefix = constraints.prefix(d.sentence);
        const int32_t token = t >= limit[d.sentence] ? kEosId
                              : t < static_cast<int>(prefix.size())
                                  ? prefix[t]
                                  : draw_token(row, vocab, allowed, decoding, uniform(d.stream, t));
        if (token < 0) return;
        const float normaliser = log_normaliser(row, vocab);
        chosen[r] = token;
        if (std::isfinite(normaliser)) gained[r] = row[token] - normaliser;
      });
    }
    failure.rethrow();

    std::vector<Draw> next;
    std::vector<int32_t> kept;
    previous.clear();
    for (int64_t r = 0; r < n; ++r) {
      Draw& d = rows[r];
      if (attention.defined()) {
        const int64_t S = attention.dim(1);
        const int positions = memory ? memory : batch.src_lengths[d.sentence];
        const float* weights = attention.data() + r * S;
        d.attention.emplace_back(weights, weights + positions);
      } else {
        d.attention.clear();
      }
      d.log_prob += gained[r];
      if (chosen[r] < 0 || !(gained[r] > kNegInf)) {  // nothing to draw from: the sample ends unscored
        d.log_prob = kNegInf;
        finish(d);
      } else if (chosen[r] == kEosId) {
        finish(d);
      } else {
        d.tokens.push_back(chosen[r]);
        previous.push_back(chosen[r]);
        kept.push_back(static_cast<int32_t>(r));
        next.push_back(std::move(d));
      }
    }
    if (next.size() != rows.size() && !next.empty()) model.reorder(*state, kept);
    rows = std::move(next);
  }

  std::vector<std::vector<Hypothesis>> out(batch.size);
  for (int b = 0; b < batch.size; ++b) {
    auto& mine = drawn[b];
    std::stable_sort(mine.begin(), mine.end(), [](const auto& x, const auto& y) {
      return x.second.score != y.second.score ? x.second.score > y.second.score : x.first < y.first;
    });
    for (auto& [index, h] : mine) out[b].push_back(std::move(h));
  }
  return out;
}

std::vector<std::vector<Hypothesis>> search(Seq2Seq& model, const Batch& batch, const DecodingConfig& decoding,
                                            bool keep_attention, const SearchConstraints& constraints) {
  return decoding.sampling.kind == SamplingKind::none ? beam_search(model, batch, decoding, keep_attention, constraints)
                                                      : sample(model, batch, decoding, keep_attention, constraints);
}

}  // namespace heed
