#include "config/fields.hpp"

#include <charconv>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "util/parse_number.hpp"

namespace heed::config_fields {
namespace {

using nlohmann::json;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Allowed interval of a number; open ends exclude the bound.
struct Range {
  double lo = -kInf, hi = kInf;
  bool lo_open = false, hi_open = false;

  bool contains(double v) const { return (lo_open ? v > lo : v >= lo) && (hi_open ? v < hi : v <= hi); }
};
// Widest beam, and most samples per sentence: each holds a decoder state at every step.
constexpr int kMaxBeam = 1000;
// Bounds of the output length limit, max_length_ratio * source tokens + max_length_offset, that
// keep it far inside an int (a larger value, meant as "no limit", wrapped to a negative limit
// that ended every translation at once).
constexpr double kMaxLengthRatio = 100;
// A gradient bucket's floats are counted in an int by MPI: under 2^31 floats (8 GiB).
constexpr double kMaxBucketMb = 8191;
constexpr int kMaxLengthOffset = 2 * kMaxInputTokens;

Range at_least(double lo) { return {lo, kInf, false, false}; }
Range above(double lo) { return {lo, kInf, true, false}; }
Range fraction_below_one() { return {0, 1, false, true}; }   // [0, 1)
Range fraction_above_zero() { return {0, 1, true, false}; }  // (0, 1]

// Shortest decimal that reads back as the same float: 0.001f prints as 0.001, not 0.0010000000474.
double shortest(float v) {
  char buf[32];
  auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  return std::strtod(std::string(buf, end).c_str(), nullptr);
}

std::string number_text(double v) {
  json j = v;
  if (v == std::floor(v) && std::fabs(v) < 1e15) j = static_cast<long long>(v);
  return j.dump();
}

std::string describe(const std::string& noun, const Range& r) {
  std::string s = noun;
  if (r.lo != -kInf) s += (r.lo_open ? " > " : " >= ") + number_text(r.lo);
  if (r.hi != kInf) s += std::string(r.lo != -kInf ? " and" : "") + (r.hi_open ? " < " : " <= ") + number_text(r.hi);
  return s;
}

json range_schema(const char* type, const Range& r) {
  json s = {{"type", type}};
  if (r.lo != -kInf) s[r.lo_open ? "exclusiveMinimum" : "minimum"] = r.lo;
  if (r.hi != kInf) s[r.hi_open ? "exclusiveMaximum" : "maximum"] = r.hi;
  for (const char* bound : {"minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"})
    if (s.contains(bound) && s[bound].get<double>() == std::floor(s[bound].get<double>()))
      s[bound] = static_cast<long long>(s[bound].get<double>());
  return s;
}

// The builders below take an accessor `[](auto& c) -> auto& { return c.section.field; }`
// that works on both Config& and const Config&.
#define HEED_AT(member) \
  [](auto& c) -> auto& { return c.member; }

template <class At>
Field integer(std::string path, At at, Range range, std::string doc) {
  std::string allowed = describe("an integer", range);
  return {path,
          doc,
          allowed,
          range_schema("integer", range),
          false,
          [at, range, allowed](Config& c, const json& v) {
            if (!v.is_number_integer()) throw BadValue(allowed);
            bool fits = v.is_number_unsigned() ? v.get<uint64_t>() <= uint64_t(INT_MAX)
                                               : v.get<int64_t>() >= INT_MIN && v.get<int64_t>() <= INT_MAX;
            if (!fits) throw BadValue(allowed + " that fits in 32 bits");
            int x = v.get<int>();
            if (!range.contains(x)) throw BadValue(allowed);
            at(c) = x;
          },
          [at](const Config& c) { return json(at(c)); }};
}

template <class At>
Field unsigned64(std::string path, At at, std::string doc) {
  std::string allowed = "an integer >= 0";
  return {path,
          doc,
          allowed,
          {{"type", "integer"}, {"minimum", 0}},
          false,
          [at, allowed](Config& c, const json& v) {
            if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<int64_t>() < 0)) throw BadValue(allowed);
            at(c) = v.get<uint64_t>();
          },
          [at](const Config& c) { return json(at(c)); }};
}

// A float or double field; JSON integers are accepted too.
template <class At>
Field number(std::string path, At at, Range range, std::string doc) {
  using T = std::remove_cvref_t<decltype(at(std::declval<Config&>()))>;
  std::string allowed = describe("a number", range);
  return {path,
          doc,
          allowed,
          range_schema("number", range),
          false,
          [at, range, allowed](Config& c, const json& v) {
            if (!v.is_number()) throw BadValue(allowed);
            // The value as stored is checked: 0.99999999 is below 1 but rounds to 1.0f, and 1e-50
            // is above 0 but rounds to 0.0f (a beta of 1 or a temperature of 0 makes NaNs). A
            // double beyond T's range is refused before the conversion, which it would overflow.
            const double given = v.get<double>();
            if (!(std::fabs(given) <= std::numeric_limits<T>::max())) throw BadValue(allowed);
            const T x = static_cast<T>(given);
            if (!range.contains(x)) throw BadValue(allowed);
            at(c) = x;
          },
          [at](const Config& c) {
            if constexpr (std::is_same_v<T, float>)
              return json(shortest(at(c)));
            else
              return json(at(c));
          }};
}

template <class At>
Field boolean(std::string path, At at, std::string doc) {
  return {path,
          doc,
          "true or false",
          {{"type", "boolean"}},
          false,
          [at](Config& c, const json& v) {
            if (!v.is_boolean()) throw BadValue("true or false");
            at(c) = v.get<bool>();
          },
          [at](const Config& c) { return json(at(c)); }};
}

template <class At>
Field text(std::string path, At at, std::string doc) {
  return {path,
          doc,
          "a string",
          {{"type", "string"}},
          true,
          [at](Config& c, const json& v) {
            if (!v.is_string()) throw BadValue("a string");
            at(c) = v.get<std::string>();
          },
          [at](const Config& c) { return json(at(c)); }};
}

// The JSON spelling of each value of an enum: parsing, to_json, the schema and name_of all
// read these tables.
template <class E>
struct Spelling {
  E value;
  const char* name;
};
constexpr Spelling<Arch> kArchs[] = {
    {Arch::gru_bahdanau, "gru-bahdanau"}, {Arch::transformer, "transformer"}, {Arch::ntm, "ntm"}, {Arch::gat, "gat"}};
constexpr Spelling<Task> kTasks[] = {{Task::translation, "translation"},
                                     {Task::node_classification, "node-classification"},
                                     {Task::link_prediction, "link-prediction"}};
constexpr Spelling<ReadoutActivation> kReadoutActivations[] = {{ReadoutActivation::tanh, "tanh"},
                                                               {ReadoutActivation::linear, "linear"}};
constexpr Spelling<FeedForwardActivation> kFeedForwardActivations[] = {{FeedForwardActivation::relu, "relu"},
                                                                       {FeedForwardActivation::gelu, "gelu"}};
constexpr Spelling<OptimizerKind> kOptimizers[] = {{OptimizerKind::adam, "adam"}, {OptimizerKind::adamw, "adamw"}};
constexpr Spelling<ScheduleKind> kSchedules[] = {{ScheduleKind::constant, "constant"},
                                                 {ScheduleKind::inverse_sqrt, "inverse-sqrt"},
                                                 {ScheduleKind::linear, "linear"},
                                                 {ScheduleKind::cosine, "cosine"}};
constexpr Spelling<BatchUnit> kBatchUnits[] = {{BatchUnit::padded, "padded"}, {BatchUnit::target, "target"}};
constexpr Spelling<DecodingPrecision> kDecodingPrecisions[] = {
    {DecodingPrecision::auto_, "auto"},
    {DecodingPrecision::fp32, "fp32"},
    {DecodingPrecision::int8, "int8"},
    {DecodingPrecision::bf16, "bf16"}};
constexpr Spelling<ComputePrecision> kComputePrecisions[] = {
    {ComputePrecision::fp32, "fp32"}, {ComputePrecision::bf16, "bf16"}, {ComputePrecision::auto_, "auto"}};
constexpr Spelling<ValidationMetric> kValidationMetrics[] = {{ValidationMetric::bleu, "bleu"},
                                                             {ValidationMetric::cross_entropy, "cross-entropy"}};

template <class E, size_t N>
std::string_view spelling(const Spelling<E> (&table)[N], E value) {
  for (const auto& s : table)
    if (s.value == value) return s.name;
  return "?";
}

// One of a fixed set of names, stored as its enum value.
template <class At, class E, size_t N>
Field choice(std::string path, At at, const Spelling<E> (&table)[N], std::string doc) {
  std::vector<std::string> names;
  for (const auto& s : table) names.push_back(s.name);
  std::string allowed = "one of";
  for (size_t i = 0; i < names.size(); ++i) allowed += (i ? ", " : " ") + json(names[i]).dump();
  std::vector<Spelling<E>> spellings(std::begin(table), std::end(table));
  return {path,
          doc,
          allowed,
          {{"type", "string"}, {"enum", names}},
          true,
          [at, spellings, allowed](Config& c, const json& v) {
            if (!v.is_string()) throw BadValue(allowed);
            const auto s = v.get<std::string>();
            for (const auto& option : spellings)
              if (s == option.name) {
                at(c) = option.value;
                return;
              }
            throw BadValue(allowed);
          },
          [at, spellings](const Config& c) {
            for (const auto& option : spellings)
              if (option.value == at(c)) return json(option.name);
            return json();
          }};
}

template <class At>
Field file_list(std::string path, At at, std::string doc) {
  std::string allowed = "a string or a list of strings";
  json schema = {{"anyOf", {{{"type", "string"}}, {{"type", "array"}, {"items", {{"type", "string"}}}}}}};
  return {path,
          doc,
          allowed,
          schema,
          false,
          [at, allowed](Config& c, const json& v) {
            std::vector<std::string> files;
            if (v.is_string()) {
              files.push_back(v.get<std::string>());
            } else if (v.is_array()) {
              for (const auto& item : v) {
                if (!item.is_string()) throw BadValue(allowed);
                files.push_back(item.get<std::string>());
              }
            } else {
              throw BadValue(allowed);
            }
            at(c) = files;
          },
          [at](const Config& c) { return json(at(c)); }};
}

// "90s", "15m", "2h", "1h30m", "1.5h" -> seconds; nullopt when malformed.
std::optional<double> parse_duration(const std::string& s) {
  if (s.empty()) return std::nullopt;
  double total = 0;
  const char* p = s.c_str();
  const char* end = p + s.size();
  while (p < end) {
    const char* start = p;
    while (p < end && (std::isdigit(static_cast<unsigned char>(*p)) || *p == '.')) ++p;
    if (p == start || p == end) return std::nullopt;
    const std::optional<double> amount = parse_number<double>(std::string_view(start, p - start));
    if (!amount) return std::nullopt;
    switch (*p++) {
      case 's': total += *amount; break;
      case 'm': total += *amount * 60; break;
      case 'h': total += *amount * 3600; break;
      default: return std::nullopt;
    }
  }
  return total;
}

template <class At>
Field duration(std::string path, At at, std::string doc) {
  std::string allowed = "a number of seconds >= 0 or a duration like \"90s\", \"15m\", \"2h\", \"1h30m\"";
  json schema = {
      {"anyOf",
       {{{"type", "number"}, {"minimum", 0}}, {{"type", "string"}, {"pattern", "^([0-9]+(\\.[0-9]+)?[smh])+$"}}}}};
  return {path,
          doc,
          allowed,
          schema,
          false,
          [at, allowed](Config& c, const json& v) {
            std::optional<double> seconds;
            if (v.is_number())
              seconds = v.get<double>();
            else if (v.is_string())
              seconds = parse_duration(v.get<std::string>());
            if (!seconds || !(*seconds >= 0) || !std::isfinite(*seconds)) throw BadValue(allowed);
            at(c) = *seconds;
          },
          [at](const Config& c) { return json(at(c)); }};
}

// "none", "full", "topk:K" or "topp:P" (see Sampling in config.hpp).
std::optional<Sampling> parse_sampling(const std::string& s) {
  Sampling out;
  if (s == "none") return out;
  if (s == "full") {
    out.kind = SamplingKind::full;
    return out;
  }
  const auto colon = s.find(':');
  if (colon == std::string::npos || colon + 1 == s.size()) return std::nullopt;
  const std::string kind = s.substr(0, colon), value = s.substr(colon + 1);
  if (kind == "topk") {
    const std::optional<int> k = parse_number<int>(value);
    if (!k || *k < 1) return std::nullopt;
    out.kind = SamplingKind::top_k;
    out.top_k = *k;
    return out;
  }
  if (kind == "topp") {
    const std::optional<double> p = parse_number<double>(value);
    if (!p || !(*p > 0 && *p <= 1)) return std::nullopt;
    out.kind = SamplingKind::top_p;
    out.top_p = static_cast<float>(*p);
    return out;
  }
  return std::nullopt;
}

template <class At>
Field sampling(std::string path, At at, std::string doc) {
  std::string allowed = "\"none\", \"full\", \"topk:K\" (K >= 1) or \"topp:P\" (0 < P <= 1)";
  json schema = {{"type", "string"}, {"pattern", "^(none|full|topk:[0-9]+|topp:[0-9.]+)$"}};
  return {path,
          doc,
          allowed,
          schema,
          true,
          [at, allowed](Config& c, const json& v) {
            std::optional<Sampling> parsed;
            if (v.is_string()) parsed = parse_sampling(v.get<std::string>());
            if (!parsed) throw BadValue(allowed);
            at(c) = *parsed;
          },
          [at](const Config& c) { return json(sampling_name(at(c))); }};
}

const std::vector<Field>& table() {
  static const std::vector<Field> fields = {
      choice("task", HEED_AT(task), kTasks,
             "What to learn: translation (parallel text) or a graph task (data.graph, model.arch gat)."),
      text("model_dir", HEED_AT(model_dir),
           "Model directory (checkpoints, tokenizer, config); the -m flag overrides it."),
      unsigned64("seed", HEED_AT(seed), "Random seed for parameter init, data order and dropout."),

      choice("model.arch", HEED_AT(model.arch), kArchs,
             "Model architecture (gat: graph tasks; ntm: Neural Turing Machine)."),
      number("model.dropout", HEED_AT(model.dropout), fraction_below_one(), "Dropout probability."),
      boolean("model.share_embeddings", HEED_AT(model.share_embeddings),
              "Source and target share one embedding matrix (needs tokenizer.joint)."),
      integer("model.gru.emb_dim", HEED_AT(model.gru.emb_dim), at_least(1), "Embedding size."),
      integer("model.gru.enc_hidden", HEED_AT(model.gru.enc_hidden), at_least(1),
              "Encoder GRU size per direction (the encoder is bidirectional)."),
      integer("model.gru.enc_layers", HEED_AT(model.gru.enc_layers), at_least(1), "Encoder GRU layers."),
      integer("model.gru.dec_hidden", HEED_AT(model.gru.dec_hidden), at_least(1), "Decoder GRU size."),
      integer("model.gru.attn_dim", HEED_AT(model.gru.attn_dim), at_least(1), "Bahdanau attention hidden size."),
      integer("model.gru.readout_dim", HEED_AT(model.gru.readout_dim), at_least(1),
              "Size of the readout layer before the output projection."),
      choice("model.gru.readout_act", HEED_AT(model.gru.readout_act), kReadoutActivations,
             "Activation of the readout layer."),
      boolean("model.gru.tie_output", HEED_AT(model.gru.tie_output),
              "Output projection shares the target embedding (needs readout_dim == emb_dim)."),
      integer("model.transformer.d_model", HEED_AT(model.transformer.d_model), at_least(1),
              "Model width (a multiple of heads)."),
      integer("model.transformer.heads", HEED_AT(model.transformer.heads), at_least(1), "Attention heads."),
      integer("model.transformer.ffn_dim", HEED_AT(model.transformer.ffn_dim), at_least(1), "Feed-forward inner size."),
      integer("model.transformer.enc_layers", HEED_AT(model.transformer.enc_layers), at_least(1), "Encoder layers."),
      integer("model.transformer.dec_layers", HEED_AT(model.transformer.dec_layers), at_least(1), "Decoder layers."),
      integer("model.transformer.max_positions", HEED_AT(model.transformer.max_positions), at_least(1),
              "Longest sequence (tokens) the position encoding covers; more than data.max_length (a longest source and "
              "its </s>)."),
      boolean("model.transformer.pre_norm", HEED_AT(model.transformer.pre_norm),
              "Layer norm before each sublayer instead of after."),
      choice("model.transformer.activation", HEED_AT(model.transformer.activation), kFeedForwardActivations,
             "Feed-forward activation."),
      integer("model.ntm.emb_dim", HEED_AT(model.ntm.emb_dim), at_least(1),
              "Token embedding size (the controller's input besides the previous reads)."),
      integer("model.ntm.controller_hidden", HEED_AT(model.ntm.controller_hidden), at_least(1), "GRU controller size."),
      integer("model.ntm.memory_rows", HEED_AT(model.ntm.memory_rows), at_least(1), "Memory rows N (locations)."),
      integer("model.ntm.memory_width", HEED_AT(model.ntm.memory_width), at_least(1), "Memory row width W."),
      integer("model.ntm.read_heads", HEED_AT(model.ntm.read_heads), at_least(1), "Read heads."),
      integer("model.ntm.write_heads", HEED_AT(model.ntm.write_heads), at_least(1), "Write heads."),
      integer("model.ntm.shift_width", HEED_AT(model.ntm.shift_width), at_least(0),
              "Location shifts of a head per step: -shift_width .. +shift_width."),
      boolean("model.ntm.learned_memory", HEED_AT(model.ntm.learned_memory),
              "The memory starts from a learned bias (true) or from the constant 1e-6 in every cell (false: learns "
              "the algorithmic tasks far faster)."),
      integer("model.gat.layers", HEED_AT(model.gat.layers), at_least(1),
              "Attention layers: layers - 1 hidden ones (heads concatenated, then ELU) and one output layer (heads "
              "averaged)."),
      integer("model.gat.hidden", HEED_AT(model.gat.hidden), at_least(1), "Features per head of a hidden layer."),
      integer("model.gat.heads", HEED_AT(model.gat.heads), at_least(1), "Heads of a hidden layer."),
      integer("model.gat.output_heads", HEED_AT(model.gat.output_heads), at_least(1),
              "Heads of the output layer, averaged."),
      number("model.gat.attention_dropout", HEED_AT(model.gat.attention_dropout), fraction_below_one(),
             "Dropout on the attention coefficients (model.dropout applies to each layer's input)."),
      number("model.gat.negative_slope", HEED_AT(model.gat.negative_slope), at_least(0),
             "Negative slope of the LeakyReLU in the attention scores."),
      integer("model.gat.embedding_dim", HEED_AT(model.gat.embedding_dim), at_least(1),
              "link-prediction: width of the node embeddings the output layer gives."),

      file_list("data.train.src", HEED_AT(data.train_src), "Training source file(s), one sentence per line."),
      file_list("data.train.tgt", HEED_AT(data.train_tgt),
                "Training target file(s), line-aligned with data.train.src."),
      text("data.dev.src", HEED_AT(data.dev_src), "Validation source file."),
      text("data.dev.tgt", HEED_AT(data.dev_tgt), "Validation reference file."),
      integer("data.max_length", HEED_AT(data.max_length), at_least(1),
              "Training pairs longer than this (tokens, either side) are skipped."),
      number("data.max_length_ratio", HEED_AT(data.max_length_ratio), at_least(0),
             "Skip training pairs whose longer/shorter length ratio exceeds this; 0 = off, else >= 1."),
      text("data.cache_dir", HEED_AT(data.cache_dir), "Where encoded data is cached; \"\" = <model_dir>/cache."),
      text("data.graph", HEED_AT(data.graph),
           "Graph tasks: directory with features.txt, labels.txt, edges.txt, train.txt, val.txt, test.txt."),
      boolean("data.normalize_features", HEED_AT(data.normalize_features),
              "Graph tasks: scale each node's features to sum 1 (as GAT does)."),
      number("data.val_edges", HEED_AT(data.val_edges), fraction_below_one(),
             "link-prediction: share of the edges held out for validation (with as many sampled non-edges)."),
      number("data.test_edges", HEED_AT(data.test_edges), fraction_below_one(),
             "link-prediction: share of the edges held out for test (with as many sampled non-edges)."),

      text("tokenizer.path", HEED_AT(tokenizer.path),
           "Existing tokenizer.json to use instead of learning one; \"\" = learn from the training data."),
      integer("tokenizer.vocab_size", HEED_AT(tokenizer.vocab_size), at_least(261),
              "Vocabulary size, including 4 special and 256 byte tokens (so at least one learned piece)."),
      boolean("tokenizer.joint", HEED_AT(tokenizer.joint), "One vocabulary for both languages (false: one per side)."),
      number("tokenizer.character_coverage", HEED_AT(tokenizer.character_coverage), fraction_above_zero(),
             "Share of character occurrences kept in the alphabet; rarer characters fall back to bytes."),
      boolean("tokenizer.split_by_script", HEED_AT(tokenizer.split_by_script),
              "Learned pieces never mix scripts, or letters with digits and punctuation (as SentencePiece)."),
      integer("tokenizer.max_piece_length", HEED_AT(tokenizer.max_piece_length), at_least(2),
              "Longest learned piece in characters, the leading word marker included."),

      choice("training.optimizer", HEED_AT(training.optimizer), kOptimizers,
             "Optimizer (adamw: decoupled weight decay)."),
      number("training.learning_rate", HEED_AT(training.learning_rate), above(0), "Peak learning rate."),
      number("training.beta1", HEED_AT(training.beta1), fraction_below_one(), "Adam beta1."),
      number("training.beta2", HEED_AT(training.beta2), fraction_below_one(), "Adam beta2."),
      number("training.eps", HEED_AT(training.eps), above(0), "Adam epsilon."),
      number("training.weight_decay", HEED_AT(training.weight_decay), at_least(0),
             "Weight decay (L2 for adam, decoupled for adamw)."),
      choice("training.schedule", HEED_AT(training.schedule), kSchedules, "Learning-rate schedule after warmup."),
      integer("training.warmup_steps", HEED_AT(training.warmup_steps), at_least(0),
              "Steps of linear warmup from 0 to learning_rate (inverse-sqrt needs >= 1)."),
      number("training.min_learning_rate", HEED_AT(training.min_learning_rate), at_least(0),
             "Lowest learning rate the linear and cosine schedules decay to (at max_steps or max_time, whichever "
             "ends first)."),
      number("training.clip_norm", HEED_AT(training.clip_norm), at_least(0),
             "Clip the global gradient norm to this; 0 = off."),
      number("training.label_smoothing", HEED_AT(training.label_smoothing), fraction_below_one(),
             "Label smoothing of the cross-entropy loss."),
      integer("training.batch_tokens", HEED_AT(training.batch_tokens), at_least(1),
              "Approximate number of tokens per training batch."),
      choice("training.batch_unit", HEED_AT(training.batch_unit), kBatchUnits,
             "What batch_tokens counts: padded positions max(B*S, B*T), or target labels incl. </s> (the PyTorch "
             "reference's batches)."),
      integer("training.accumulate", HEED_AT(training.accumulate), at_least(1),
              "Batches whose gradients are summed per update (per process: with mpirun -np N an update "
              "takes N * accumulate batches)."),
      number("training.reduce_bucket_mb", HEED_AT(training.reduce_bucket_mb), Range{0, kMaxBucketMb, true, false},
             "Data-parallel runs: megabytes of gradients summed over the processes per all-reduce."),
      boolean("training.reduce_overlap", HEED_AT(training.reduce_overlap),
              "Data-parallel runs: start each bucket's all-reduce during backward, as soon as its gradients are "
              "complete (false: all after backward)."),
      choice("training.precision", HEED_AT(training.precision), kComputePrecisions,
             "Matrix products in fp32, or in bf16 with fp32 accumulation (weights, gradients and optimizer state "
             "stay fp32; needs a CPU with avx512_bf16), or auto: bf16 where the CPU has it."),
      integer("training.max_epochs", HEED_AT(training.max_epochs), at_least(0),
              "Stop after this many epochs; 0 = no limit."),
      integer("training.max_steps", HEED_AT(training.max_steps), at_least(0),
              "Stop after this many updates; 0 = no limit."),
      duration("training.max_time", HEED_AT(training.max_time), "Stop after this much training time; 0 = no limit."),
      integer("training.patience", HEED_AT(training.patience), at_least(0),
              "Stop after this many validations without improvement; 0 = off."),
      integer("training.validate_every", HEED_AT(training.validate_every), at_least(1),
              "Validate every this many updates."),
      choice("training.validation_metric", HEED_AT(training.validation_metric), kValidationMetrics,
             "Metric that picks the best checkpoint and drives patience."),
      integer("training.validation_lines", HEED_AT(training.validation_lines), at_least(0),
              "Validate (loss and BLEU) on the first this many lines of the dev set, for cheaper validations "
              "during training; 0 = all."),
      integer("training.log_every", HEED_AT(training.log_every), at_least(1), "Log progress every this many updates."),
      integer("training.keep_last", HEED_AT(training.keep_last), at_least(1),
              "Number of most recent checkpoints kept."),
      integer("training.average_last", HEED_AT(training.average_last), at_least(0),
              "When training ends, validate the mean of the last this many checkpoints and keep it as "
              "model.safetensors if it beats the best single one; 0 = off (needs keep_last >= it)."),
      integer("training.max_bad_steps", HEED_AT(training.max_bad_steps), at_least(1),
              "Give up after this many consecutive updates with a non-finite loss or gradient."),
      boolean("training.resume", HEED_AT(training.resume), "Continue from the last checkpoint in model_dir."),

      integer("decoding.beam", HEED_AT(decoding.beam), Range{1, kMaxBeam}, "Beam size (1 = greedy)."),
      number("decoding.length_penalty", HEED_AT(decoding.length_penalty), at_least(0),
             "Length penalty alpha for beam search; 0 = no length normalisation."),
      number("decoding.max_length_ratio", HEED_AT(decoding.max_length_ratio), Range{0, kMaxLengthRatio, true, false},
             "Output length limit: max_length_ratio * source length + max_length_offset."),
      integer("decoding.max_length_offset", HEED_AT(decoding.max_length_offset), Range{0, kMaxLengthOffset},
              "See decoding.max_length_ratio."),
      integer("decoding.nbest", HEED_AT(decoding.nbest), Range{1, kMaxBeam},
              "Hypotheses returned per sentence, best first (at most decoding.beam; with sampling: samples per "
              "sentence)."),
      boolean("decoding.allow_unk", HEED_AT(decoding.allow_unk), "Let the search produce <unk>."),
      integer("decoding.batch_size", HEED_AT(decoding.batch_size), at_least(1), "Sentences per batch."),
      integer("decoding.batch_tokens", HEED_AT(decoding.batch_tokens), at_least(0),
              "Padded source tokens (incl. </s>) per batch instead of batch_size; 0 = off."),
      integer("decoding.max_input_length", HEED_AT(decoding.max_input_length), Range{0, kMaxInputTokens},
              "Longer inputs are cut to this many tokens (with a warning); 0 = data.max_length."),
      integer("decoding.validation_beam", HEED_AT(decoding.validation_beam), Range{1, kMaxBeam},
              "Beam size for BLEU during training validation."),
      sampling("decoding.sampling", HEED_AT(decoding.sampling),
               "Sample translations instead of beam search: from the whole distribution (full), its K most likely "
               "tokens (topk:K) or the fewest most likely tokens holding probability P (topp:P); none = beam search. "
               "decoding.nbest samples per input."),
      number("decoding.temperature", HEED_AT(decoding.temperature), above(0),
             "Sampling: draw from softmax(logits / temperature) (below 1: sharper, above 1: flatter)."),
      unsigned64("decoding.sampling_seed", HEED_AT(decoding.sampling_seed),
                 "Sampling: seeds each input line's draws (with its line number), so that samples do not depend on "
                 "batching or threads."),
      choice("decoding.precision", HEED_AT(decoding.precision), kDecodingPrecisions,
             "Products of the decoder's steps: int8 (weights quantized by rows, activations on the fly), fp32, bf16 "
             "(every product, with fp32 accumulation; needs a CPU with avx512_bf16), or auto (int8 for a model "
             "written by heed quantize, else fp32)."),
  };
  return fields;
}

#undef HEED_AT

const std::vector<std::pair<std::string, std::string>>& sections() {
  static const std::vector<std::pair<std::string, std::string>> docs = {
      {"model", "Model architecture and sizes."},
      {"model.gru", "GRU encoder-decoder with Bahdanau attention (model.arch = gru-bahdanau)."},
      {"model.transformer", "Transformer (model.arch = transformer)."},
      {"model.gat", "Graph attention network (model.arch = gat, for the graph tasks)."},
      {"model.ntm",
       "Neural Turing Machine: a GRU controller with read and write heads on a memory (model.arch = ntm)."},
      {"data", "Training and validation data."},
      {"data.train", "Training corpus: source and target files, line-aligned."},
      {"data.dev", "Validation set."},
      {"tokenizer", "Subword tokenizer (BPE)."},
      {"training", "Optimizer, schedule, batching and stopping."},
      {"decoding", "Beam search for translate and validation."},
  };
  return docs;
}

}  // namespace

const std::vector<Field>& all() { return table(); }

const Field* find(std::string_view path) {
  for (const auto& f : table())
    if (f.path == path) return &f;
  return nullptr;
}

bool is_section(std::string_view path) {
  for (const auto& [name, doc] : sections())
    if (name == path) return true;
  return false;
}

std::string section_doc(std::string_view path) {
  for (const auto& [name, doc] : sections())
    if (name == path) return doc;
  return "";
}

}  // namespace heed::config_fields

namespace heed {

std::string sampling_name(const Sampling& sampling) {
  switch (sampling.kind) {
    case SamplingKind::none: return "none";
    case SamplingKind::full: return "full";
    case SamplingKind::top_k: return "topk:" + std::to_string(sampling.top_k);
    case SamplingKind::top_p: {
      char buf[32];
      const auto result = std::to_chars(buf, buf + sizeof buf, sampling.top_p);  // shortest round trip
      return "topp:" + std::string(buf, result.ptr);
    }
  }
  return "none";
}

std::string_view name_of(DecodingPrecision value) {
  return config_fields::spelling(config_fields::kDecodingPrecisions, value);
}
std::string_view name_of(ComputePrecision value) {
  return config_fields::spelling(config_fields::kComputePrecisions, value);
}

std::string_view name_of(Arch value) { return config_fields::spelling(config_fields::kArchs, value); }
std::string_view name_of(Task value) { return config_fields::spelling(config_fields::kTasks, value); }
std::string_view name_of(ReadoutActivation value) {
  return config_fields::spelling(config_fields::kReadoutActivations, value);
}
std::string_view name_of(FeedForwardActivation value) {
  return config_fields::spelling(config_fields::kFeedForwardActivations, value);
}
std::string_view name_of(OptimizerKind value) { return config_fields::spelling(config_fields::kOptimizers, value); }
std::string_view name_of(ScheduleKind value) { return config_fields::spelling(config_fields::kSchedules, value); }
std::string_view name_of(BatchUnit value) { return config_fields::spelling(config_fields::kBatchUnits, value); }
std::string_view name_of(ValidationMetric value) {
  return config_fields::spelling(config_fields::kValidationMetrics, value);
}

}  // namespace heed
