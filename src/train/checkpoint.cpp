#include "train/checkpoint.hpp"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>

#include "io/safetensors.hpp"
#include "tensor/precision.hpp"
#include "tensor/quantize.hpp"
#include "models/factory.hpp"
#include "util/error.hpp"

namespace heed {

bool quantizable(const Tensor& t) { return t.ndim() == 2 && t.dim(0) >= 8 && t.dim(1) >= 8; }

void save_parameters(const std::string& path, const ParameterSet& params,
                     const std::map<std::string, std::string>& metadata, bool int8) {
  SafeTensorFile file;
  for (const auto& [name, var] : params.all()) {
    const Tensor& v = var.value();
    if (!int8 || !quantizable(v)) {
      file.tensors[name] = SafeTensor::from_f32(v.shape(), v.to_vector());
      continue;
    }
    const QuantizedRows q = quantize_rows(v);
    SafeTensor values;
    values.dtype = "I8";
    values.shape.assign(v.shape().begin(), v.shape().end());
    values.data.resize(q.values.size());
    std::memcpy(values.data.data(), q.values.data(), q.values.size());
    file.tensors[name] = std::move(values);
    file.tensors[name + kInt8ScalesSuffix] = SafeTensor::from_f32({q.rows}, q.scales);
  }
  file.metadata = metadata;
  if (!params.aliases().empty()) {
    std::string tied = "{";
    for (const auto& [alias, target] : params.aliases())
      tied += (tied.size() > 1 ? ", \"" : "\"") + alias + "\": \"" + target + "\"";
    file.metadata["tied"] = tied + "}";
  }
  file.metadata["format"] = "pt";
  if (int8) file.metadata["precision"] = "int8";
  write_safetensors(path, file);
}

namespace {

// An I8 tensor and its scales, dequantized into `into` (checked against the file).
void load_int8(const std::string& path, const std::string& name, const SafeTensorFile& file, const Tensor& into) {
  const SafeTensor& t = file.tensors.at(name);
  const auto scales_it = file.tensors.find(name + kInt8ScalesSuffix);
  if (scales_it == file.tensors.end())
    throw Error(path + ": int8 tensor " + name + " has no scales (" + name + kInt8ScalesSuffix + ")");
  const SafeTensor& scales = scales_it->second;
  if (into.ndim() != 2 || scales.dtype != "F32" || scales.shape != std::vector<int64_t>{into.dim(0)})
    throw Error(path + ": int8 tensor " + name + ": its scales " + name + kInt8ScalesSuffix +
                " must be F32 with one value per row of " + shape_str(into.shape()));
  QuantizedRows q;
  q.rows = into.dim(0);
  q.cols = into.dim(1);
  q.values.resize(t.data.size());
  std::memcpy(q.values.data(), t.data.data(), t.data.size());
  q.scales = scales.as_f32();
  for (float s : q.scales)
    if (!(s > 0) || !std::isfinite(s)) throw Error(path + ": int8 tensor " + name + " has a scale that is not > 0");
  const Tensor values = dequantize_rows(q);
  std::memcpy(into.data(), values.data(), values.numel() * sizeof(float));
}

}  // namespace

bool load_parameters(const std::string& path, const ParameterSet& params) {
  return load_parameters(read_safetensors(path), path, params);
}

bool load_parameters(const SafeTensorFile& file, const std::string& path, const ParameterSet& params) {
  bool int8 = false;
  for (const auto& [name, var] : params.all()) {
    auto it = file.tensors.find(name);
    if (it == file.tensors.end()) throw Error(path + ": missing tensor " + name);
    const SafeTensor& t = it->second;
    if (t.dtype != "F32" && t.dtype != "I8")
      throw Error(path + ": tensor " + name + " has dtype " + t.dtype + ", expected F32 (or I8 in an int8 file)");
    if (Shape(t.shape.begin(), t.shape.end()) != var.shape())
      throw Error(path + ": tensor " + name + " has shape " + shape_str(Shape(t.shape.begin(), t.shape.end())) +
                  ", the model expects " + shape_str(var.shape()));
    if (t.dtype == "I8") {
      load_int8(path, name, file, var.value());
      int8 = true;
    } else {
      std::memcpy(var.value().data(), t.data.data(), t.data.size());
    }
  }
  refresh_bf16_weight_copies();
  // Names stored once each: a tensor under a tied parameter's other name would be ignored (the
  // model reads the one it is tied to), so it is refused like any other extra tensor.
  std::set<std::string> stored;
  for (const auto& [name, var] : params.all()) stored.insert(name);
  for (const auto& [name, t] : file.tensors) {
    const size_t suffix = std::string(kInt8ScalesSuffix).size();
    const std::string base = name.size() > suffix ? name.substr(0, name.size() - suffix) : "";
    const bool scales_of_int8 = name.size() > suffix &&
                                name.compare(name.size() - suffix, suffix, kInt8ScalesSuffix) == 0 &&
                                stored.count(base) && file.tensors.at(base).dtype == "I8";
    if (stored.count(name) || scales_of_int8) continue;
    const auto tied = params.aliases().find(name);
    if (tied != params.aliases().end())
      throw Error(path + ": unexpected tensor " + name + " (this model ties it to " + tied->second +
                  ", stored once under that name: was the model trained with other tying settings?)");
    throw Error(path + ": unexpected tensor " + name + " (not a parameter of this model)");
  }
  return int8;
}

ModelBundle load_model_dir(const std::string& dir, const std::string& weights) {
  if (!std::filesystem::exists(dir)) throw Error("model directory " + dir + " does not exist");
  if (!std::filesystem::is_directory(dir))
    throw Error(dir +
                " is not a model directory but a file (give the directory that holds config.json, "
                "tokenizer.json and model.safetensors)");
  ModelBundle bundle{load_model_config(dir), Tokenizers::load(dir + "/tokenizer.json"), nullptr};
  // Each parameter takes at least a byte of the weights file (int8): a config.json describing a
  // larger model was edited or belongs to another, and building it could take all the memory.
  const std::string weights_path = dir + "/" + weights;
  const int64_t parameters = model_parameter_count(bundle.config.model, bundle.tokenizers.source().vocab_size(),
                                                   bundle.tokenizers.target().vocab_size());
  std::error_code size_error;
  const auto weights_bytes = std::filesystem::file_size(weights_path, size_error);
  if (!size_error && static_cast<uintmax_t>(parameters) > weights_bytes)
    throw Error(dir + "/config.json: describes a model of " + std::to_string(parameters) + " parameters, more than " +
                weights + " (" + std::to_string(weights_bytes) +
                " bytes) can hold: was config.json edited, or does the file belong to another model?");
  bundle.model = make_model(bundle.config.model, bundle.tokenizers.source().vocab_size(),
                            bundle.tokenizers.target().vocab_size(), bundle.config.seed);
  bundle.int8 = load_parameters(weights_path, bundle.model->parameters());
  return bundle;
}

}  // namespace heed
