#pragma once
// The configuration of a heed run: one JSON file with the sections model, data, tokenizer,
// training and decoding, parsed into the typed structs below. The sections are the options of
// the layers that use them (beam search takes DecodingConfig, the optimizer TrainingConfig):
// there are no mirror structs. Every default is written here, once; every field is described
// (type, range, meaning) in one table in fields.cpp, which drives parsing, validation, to_json,
// the JSON Schema, the "did you mean" suggestions and the flags generated for the CLI. Every
// check runs when a config is loaded, before any data is read; fixed choices are enums, parsed
// there, so nothing compares strings later.
// configs/README.md documents the fields for users; configs/schema.json is generated from the
// table (`heed config schema`) and kept in sync by tests/config/test_schema.cpp.
//
// All errors are heed::UsageError naming the origin (file or --set) and the full field path.
#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace heed {

// Fixed choices. Their JSON spellings are in the field table; name_of gives them back.
enum class Arch { gru_bahdanau, transformer, ntm, gat };  // "gru-bahdanau", "transformer", "ntm", "gat"
// What `heed train` learns: translation (a Seq2Seq model) or a graph task (gat).
enum class Task { translation, node_classification, link_prediction };  // "node-classification", ...
enum class ReadoutActivation { tanh, linear };
enum class FeedForwardActivation { relu, gelu };
enum class OptimizerKind { adam, adamw };  // adamw: decoupled weight decay
enum class ScheduleKind { constant, inverse_sqrt, linear, cosine };
// What training.batch_tokens counts:
//   padded: the padded size max(B*S, B*T) of the batch (what the model computes on);
//   target: its target labels incl. </s>, Σ (m_i + 1), no padding (the PyTorch reference's
//           --batch-tokens, so the two can be compared on equal batches).
enum class BatchUnit { padded, target };
enum class ValidationMetric { bleu, cross_entropy };  // "bleu", "cross-entropy"
enum class DecodingPrecision { auto_, fp32, int8, bf16 };  // "auto": int8 for an int8 model file, else fp32
enum class ComputePrecision { fp32, bf16, auto_ };         // training.precision; "auto": bf16 where the CPU has it

std::string_view name_of(Arch value);
std::string_view name_of(Task value);
std::string_view name_of(ReadoutActivation value);
std::string_view name_of(FeedForwardActivation value);
std::string_view name_of(OptimizerKind value);
std::string_view name_of(ScheduleKind value);
std::string_view name_of(BatchUnit value);
std::string_view name_of(ValidationMetric value);
std::string_view name_of(DecodingPrecision value);
std::string_view name_of(ComputePrecision value);

struct GruConfig {
  int emb_dim = 256;
  int enc_hidden = 512;  // per direction (the encoder is bidirectional)
  int enc_layers = 1;
  int dec_hidden = 512;
  int attn_dim = 512;
  int readout_dim = 256;
  ReadoutActivation readout_act = ReadoutActivation::tanh;
  bool tie_output = false;  // output projection = target embedding (readout_dim == emb_dim)
  bool operator==(const GruConfig&) const = default;
};

struct TransformerConfig {
  int d_model = 256;
  int heads = 4;  // d_model % heads == 0
  int ffn_dim = 1024;
  int enc_layers = 3;
  int dec_layers = 3;
  int max_positions = 1024;
  bool pre_norm = false;
  FeedForwardActivation activation = FeedForwardActivation::relu;
  bool operator==(const TransformerConfig&) const = default;
};

// Graph attention network (Veličković et al. 2018); defaults are the paper's Cora settings.
struct GatConfig {
  int layers = 2;                  // attention layers: layers − 1 hidden ones (heads concatenated, ELU), one output
  int hidden = 8;                  // features per head of a hidden layer
  int heads = 8;                   // heads of a hidden layer
  int output_heads = 1;            // heads of the output layer (averaged)
  float attention_dropout = 0.6f;  // on the attention coefficients (model.dropout: on each layer's input)
  float negative_slope = 0.2f;     // of the LeakyReLU in the scores
  int embedding_dim = 16;          // link-prediction: width of the node embeddings (the output layer)
  bool operator==(const GatConfig&) const = default;
};

// Neural Turing Machine (Graves, Wayne & Danihelka 2014): a GRU controller with read and write
// heads on an N × W memory. Defaults: the paper's copy-task memory (128 × 20), one head each.
struct NtmConfig {
  int emb_dim = 32;
  int controller_hidden = 100;  // GRU controller size
  int memory_rows = 128;        // N
  int memory_width = 20;        // W
  int read_heads = 1;
  int write_heads = 1;
  int shift_width = 1;  // location shifts −shift_width .. +shift_width
  bool learned_memory = false;  // memory starts from a learned bias, else from 1e-6 in every cell
  bool operator==(const NtmConfig&) const = default;
};

struct ModelConfig {
  Arch arch = Arch::gru_bahdanau;
  float dropout = 0.1f;           // 0 <= dropout < 1
  bool share_embeddings = false;  // source embedding = target embedding (needs tokenizer.joint)
  GruConfig gru;                  // "model.gru.*"
  TransformerConfig transformer;  // "model.transformer.*"
  GatConfig gat;                  // "model.gat.*"
  NtmConfig ntm;                  // "model.ntm.*"
  bool operator==(const ModelConfig&) const = default;
};

struct DataConfig {
  std::vector<std::string> train_src;  // "data.train.src": a string or a list of strings
  std::vector<std::string> train_tgt;  // "data.train.tgt": same number of files as train_src
  std::string dev_src;                 // "data.dev.src"
  std::string dev_tgt;                 // "data.dev.tgt"
  int max_length = 100;                // training pairs longer (in tokens) on either side are skipped
  float max_length_ratio = 0;          // skip pairs with longer/shorter > ratio; 0 = off, else >= 1
  std::string cache_dir = "";          // "" = <model_dir>/cache
  std::string graph = "";              // graph tasks: directory of features.txt, labels.txt, edges.txt, splits
  bool normalize_features = true;      // scale each node's features to sum 1 (as GAT does)
  // Link prediction: shares of the edges held out for validation and for test. Doubles: a float
  // share, widened, held out one edge too few (0.35f * 20 = 6.99999…).
  double val_edges = 0.05;
  double test_edges = 0.1;
  bool operator==(const DataConfig&) const = default;
};

struct TokenizerConfig {
  std::string path = "";  // existing tokenizer.json to use instead of learning one
  int vocab_size = 8000;
  bool joint = true;  // one vocabulary for both languages
  double character_coverage = 0.9995;
  bool split_by_script = true;
  int max_piece_length = 16;
  bool operator==(const TokenizerConfig&) const = default;
};

struct TrainingConfig {
  OptimizerKind optimizer = OptimizerKind::adam;
  float learning_rate = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0;
  ScheduleKind schedule = ScheduleKind::constant;
  int warmup_steps = 0;
  float min_learning_rate = 0;
  float clip_norm = 1.0f;  // 0 = off
  float label_smoothing = 0.1f;
  int batch_tokens = 2000;
  BatchUnit batch_unit = BatchUnit::padded;
  int accumulate = 1;
  double reduce_bucket_mb = 4;  // data-parallel runs: gradients per all-reduce
  bool reduce_overlap = true;   // data-parallel runs: start each bucket during backward
  ComputePrecision precision = ComputePrecision::fp32;  // of the matrix products (tensor/precision.hpp)
  int max_epochs = 0;   // 0 = no limit
  int max_steps = 0;    // 0 = no limit
  double max_time = 0;  // seconds, 0 = no limit; JSON: a number of seconds or "90s", "15m", "2h"
  int patience = 0;     // stop after this many validations without improvement; 0 = off
  int validate_every = 1000;
  ValidationMetric validation_metric = ValidationMetric::bleu;
  int validation_lines = 0;  // validate on the dev set's first this many lines; 0 = all
  int log_every = 100;
  int keep_last = 3;       // checkpoints kept
  int average_last = 0;    // at the end, try the mean of the last this many checkpoints; 0 = off
  int max_bad_steps = 10;  // consecutive non-finite steps before giving up
  bool resume = false;
  bool operator==(const TrainingConfig&) const = default;
};

// Longest input translated, in tokens: a line's search holds states for every source position
// and runs up to twice as many steps, so longer lines are cut to it.
inline constexpr int kMaxInputTokens = 4096;

// How a translation is chosen: beam search (none), or by sampling each token from the model's
// distribution: the whole of it (full), its k most likely tokens (topk), or the fewest most likely
// tokens whose probability reaches p (topp). JSON: "none", "full", "topk:K", "topp:P".
enum class SamplingKind { none, full, top_k, top_p };
struct Sampling {
  SamplingKind kind = SamplingKind::none;
  int top_k = 0;     // topk: K >= 1
  float top_p = 0;   // topp: 0 < P <= 1
  bool operator==(const Sampling&) const = default;
};
std::string sampling_name(const Sampling& sampling);  // its JSON spelling

struct DecodingConfig {
  int beam = 5;
  float length_penalty = 1.0f;
  float max_length_ratio = 2.0f;  // max output length = max_length_ratio * src_len + max_length_offset
  int max_length_offset = 10;
  int nbest = 1;             // hypotheses returned per sentence, 1..beam
  bool allow_unk = false;    // let the search produce <unk>
  int batch_size = 32;       // sentences per batch
  int batch_tokens = 0;      // padded source tokens (incl. </s>) per batch; 0 = off (use batch_size)
  int max_input_length = 0;  // longer inputs are cut to this many tokens; 0 = data.max_length
  int validation_beam = 1;
  Sampling sampling;         // none = beam search
  float temperature = 1.0f;  // sampling: the distribution is softmax(logits / temperature)
  uint64_t sampling_seed = 1;  // sampling: with the input line number, seeds each sentence's draws
  DecodingPrecision precision = DecodingPrecision::auto_;  // of the decoder's step products
  bool operator==(const DecodingConfig&) const = default;
};

struct Config {
  Task task = Task::translation;
  std::string model_dir = "";  // optional; the -m flag overrides it
  uint64_t seed = 1;           // parameter init, data order, dropout
  ModelConfig model;
  DataConfig data;
  TokenizerConfig tokenizer;
  TrainingConfig training;
  DecodingConfig decoding;
  bool operator==(const Config&) const = default;
};

Config default_config();

// decoding.max_input_length, with 0 resolved to data.max_length.
int input_length_limit(const Config& config);

// A field of the table as the CLI shows it: `heed translate` and `heed train` generate their
// flags from these, so a new field is a flag without new CLI code.
struct FieldInfo {
  std::string path;           // "decoding.beam"
  std::string doc;            // one sentence
  std::string allowed;        // "an integer >= 1"
  std::string default_value;  // JSON text of the default: "5"
  bool is_boolean = false;    // a flag without a value
};
// "" when `text` (read as --set reads it) is a valid value of the field at `path`, else what is
// wrong: "got 0, expected an integer >= 1". For checking a flag's value as it is parsed.
std::string check_field_value(const std::string& path, const std::string& text);
// The fields directly in `section` ("decoding"), in table order.
std::vector<FieldInfo> fields_of_section(std::string_view section);

// Reads a JSON config file, fills in defaults, applies `--set key=value` overrides in order and
// validates everything. An empty path means: defaults plus overrides.
Config load_config(const std::string& path, const std::vector<std::string>& overrides = {});

// Validates a parsed JSON config; `origin` names it in errors (a file path, "--set ...").
Config config_from_json(const nlohmann::json& j, const std::string& origin);
// The text of a config file, parsed (file:line:column errors, duplicate keys refused),
// overridden and validated as load_config does.
Config config_from_text(const std::string& text, const std::string& origin,
                        const std::vector<std::string>& overrides = {});

// The effective config with every field present; config_from_json(to_json(c)) == c.
nlohmann::json to_json(const Config& config);

// `key_eq_value` is "training.learning_rate=0.0005": the value is parsed as JSON when it parses,
// else taken as a string. The key and the value are validated at once (UsageError, naming
// `flag` when the value came from a flag such as --beam, else the --set).
void apply_override(nlohmann::json& j, const std::string& key_eq_value, const std::string& flag = "");

// `base` with overrides applied and re-validated (e.g. a model's stored config + --set decoding.beam=8).
Config with_overrides(const Config& base, const std::vector<std::string>& overrides, const std::string& origin);

// A trained model stores its effective config as <model_dir>/config.json.
void save_config(const Config& config, const std::string& path);  // atomic
Config load_model_config(const std::string& model_dir);

// A field that defines a trained model (its architecture or its tokenizer: model.*, except
// dropout and the other architecture's section, and tokenizer.*) and differs between `trained`
// and `requested`: what a resumed run must not change. Empty path when there is none.
struct FieldChange {
  std::string path;
  std::string trained, requested;  // the values as JSON text
};
FieldChange model_defining_change(const Config& trained, const Config& requested);

// JSON Schema (draft 2020-12) of the config file, generated from the field table.
nlohmann::json config_schema();

}  // namespace heed
