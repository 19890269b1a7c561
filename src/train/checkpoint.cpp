#include "train/checkpoint.hpp"

#include <cstring>
#include <filesystem>

#include "io/safetensors.hpp"
#include "models/factory.hpp"
#include "util/error.hpp"

namespace heed {

void save_parameters(const std::string& path, const ParameterSet& params,
                     const std::map<std::string, std::string>& metadata) {
  SafeTensorFile file;
  for (const auto& [name, var] : params.all()) {
    const Tensor& v = var.value();
    file.tensors[name] = SafeTensor::from_f32(v.shape(), v.to_vector());
  }
  file.metadata = metadata;
  if (!params.aliases().empty()) {
    std::string tied = "{";
    for (const auto& [alias, target] : params.aliases())
      tied += (tied.size() > 1 ? ", \"" : "\"") + alias + "\": \"" + target + "\"";
    file.metadata["tied"] = tied + "}";
  }
  file.metadata["format"] = "pt";
  write_safetensors(path, file);
}

void load_parameters(const std::string& path, const ParameterSet& params) {
  SafeTensorFile file = read_safetensors(path);
  for (const auto& [name, var] : params.all()) {
    auto it = file.tensors.find(name);
    if (it == file.tensors.end()) throw Error(path + ": missing tensor " + name);
    const SafeTensor& t = it->second;
    if (t.dtype != "F32") throw Error(path + ": tensor " + name + " has dtype " + t.dtype + ", expected F32");
    if (Shape(t.shape.begin(), t.shape.end()) != var.shape())
      throw Error(path + ": tensor " + name + " has shape " + shape_str(Shape(t.shape.begin(), t.shape.end())) +
                  ", the model expects " + shape_str(var.shape()));
    std::memcpy(var.value().data(), t.data.data(), t.data.size());
  }
  for (const auto& [name, t] : file.tensors)
    if (!params.contains(name)) throw Error(path + ": unexpected tensor " + name + " (not a parameter of this model)");
}

ModelBundle load_model_dir(const std::string& dir, const std::string& weights) {
  if (!std::filesystem::exists(dir)) throw Error("model directory " + dir + " does not exist");
  if (!std::filesystem::is_directory(dir))
    throw Error(dir +
                " is not a model directory but a file (give the directory that holds config.json, "
                "tokenizer.json and model.safetensors)");
  ModelBundle bundle{load_model_config(dir), Tokenizers::load(dir + "/tokenizer.json"), nullptr};
  bundle.model = make_model(bundle.config.model, bundle.tokenizers.source().vocab_size(),
                            bundle.tokenizers.target().vocab_size(), bundle.config.seed);
  load_parameters(dir + "/" + weights, bundle.model->parameters());
  return bundle;
}

}  // namespace heed
