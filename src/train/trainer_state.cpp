#include "train/trainer_state.hpp"

#include <cstdio>
#include <cstring>
#include <type_traits>

#include "io/safetensors.hpp"
#include "tensor/precision.hpp"
#include "util/error.hpp"
#include "util/parse_number.hpp"

namespace heed {
namespace {
SafeTensor to_safe(const Tensor& t) { return SafeTensor::from_f32(t.shape(), t.to_vector()); }

void from_safe(const SafeTensorFile& file, const std::string& path, const std::string& name, const Tensor& into) {
  auto it = file.tensors.find(name);
  if (it == file.tensors.end()) throw Error(path + ": missing tensor " + name);
  if (it->second.dtype != "F32" || Shape(it->second.shape.begin(), it->second.shape.end()) != into.shape())
    throw Error(path + ": tensor " + name + " does not match the model (" + it->second.dtype + " " +
                shape_str(Shape(it->second.shape.begin(), it->second.shape.end())) + ", expected F32 " +
                shape_str(into.shape()) + ")");
  std::memcpy(into.data(), it->second.data.data(), it->second.data.size());
}

// The counters are never negative; a field that is not exactly a number is an error, not a
// prefix read as one ("12abc") or a wrapped "-1".
template <class T>
T meta(const SafeTensorFile& file, const std::string& path, const std::string& key) {
  auto it = file.metadata.find(key);
  if (it == file.metadata.end()) throw Error(path + ": missing trainer state field " + key);
  std::optional<T> value = parse_number<T>(it->second);
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
    if (value && *value < 0) value.reset();
  if (!value)
    throw Error(path + ": trainer state field " + key + " is not a" +
                (std::is_integral_v<T> ? " non-negative integer" : " number") + " (\"" + it->second + "\")");
  return *value;
}

}  // namespace

std::string exact_number(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

double task_number(const TrainerProgress& progress, const std::string& key, const std::string& path) {
  auto it = progress.task_state.find(key);
  if (it == progress.task_state.end()) throw Error(path + ": missing trainer state field task." + key);
  const std::optional<double> value = parse_number<double>(it->second);
  if (!value) throw Error(path + ": trainer state field task." + key + " is not a number (\"" + it->second + "\")");
  return *value;
}

void save_trainer_state(const std::string& path, const ParameterSet& params, const Adam& adam, const TrainerProgress& p,
                        const std::vector<Tensor>* best) {
  SafeTensorFile file;
  size_t i = 0;
  for (const auto& [name, var] : params.all()) {
    file.tensors["param." + name] = to_safe(var.value());
    file.tensors["adam.m." + name] = to_safe(adam.first_moments()[i]);
    file.tensors["adam.v." + name] = to_safe(adam.second_moments()[i]);
    if (best && !best->empty()) file.tensors["best." + name] = to_safe((*best)[i]);
    ++i;
  }
  file.metadata = {{"format", "heed-trainer-state"},
                   {"version", "1"},
                   {"step", std::to_string(p.step)},
                   {"adam_steps", std::to_string(adam.steps())},
                   {"epoch", std::to_string(p.epoch)},
                   {"batch_index", std::to_string(p.batch_index)},
                   {"rng_seed", std::to_string(p.rng_seed)},
                   {"rng_counter", std::to_string(p.rng_counter)},
                   {"elapsed_seconds", exact_number(p.elapsed_seconds)},
                   {"best_metric", exact_number(p.best_metric)},
                   {"has_best", p.has_best ? "1" : "0"},
                   {"validations_without_improvement", std::to_string(p.validations_without_improvement)},
                   {"validated_step", std::to_string(p.validated_step)},
                   {"skipped_in_a_row", std::to_string(p.skipped_in_a_row)},
                   {"step_checkpoint", p.step_checkpoint ? "1" : "0"}};
  for (const auto& [key, value] : p.task_state) file.metadata["task." + key] = value;
  write_safetensors(path, file);
}

void record_best_metric(const std::string& path, double best_metric) {
  SafeTensorFile file = read_safetensors(path);
  if (file.metadata["format"] != "heed-trainer-state") throw Error(path + ": not a heed trainer state");
  file.metadata["best_metric"] = exact_number(best_metric);
  file.metadata["has_best"] = std::string(1, '1');  // GCC 12 warns falsely (-Wrestrict) on = "1" here
  write_safetensors(path, file);
}

TrainerProgress load_trainer_state(const std::string& path, const ParameterSet& params, Adam& adam,
                                   std::vector<Tensor>* best) {
  SafeTensorFile file = read_safetensors(path);
  if (file.metadata["format"] != "heed-trainer-state" || file.metadata["version"] != "1")
    throw Error(path + ": not a heed trainer state (format version 1)");
  std::vector<Tensor> m, v;
  for (const auto& [name, var] : params.all()) {
    from_safe(file, path, "param." + name, var.value());
    m.push_back(Tensor::empty(var.shape()));
    v.push_back(Tensor::empty(var.shape()));
    from_safe(file, path, "adam.m." + name, m.back());
    from_safe(file, path, "adam.v." + name, v.back());
    if (best && file.tensors.count("best." + name)) {
      best->push_back(Tensor::empty(var.shape()));
      from_safe(file, path, "best." + name, best->back());
    }
  }
  if (best && !best->empty() && best->size() != params.all().size())
    throw Error(path + ": the kept best parameters are incomplete");
  refresh_bf16_weight_copies();  // a bf16 run's products read these parameters, not the ones before
  adam.set_state(meta<int64_t>(file, path, "adam_steps"), m, v);
  TrainerProgress p;
  p.step = meta<int64_t>(file, path, "step");
  p.epoch = meta<int64_t>(file, path, "epoch");
  p.batch_index = meta<uint64_t>(file, path, "batch_index");
  p.rng_seed = meta<uint64_t>(file, path, "rng_seed");
  p.rng_counter = meta<uint64_t>(file, path, "rng_counter");
  p.elapsed_seconds = meta<double>(file, path, "elapsed_seconds");
  p.best_metric = meta<double>(file, path, "best_metric");
  p.has_best = meta<int64_t>(file, path, "has_best") != 0;
  p.validations_without_improvement = meta<int64_t>(file, path, "validations_without_improvement");
  p.validated_step = meta<int64_t>(file, path, "validated_step");
  // Absent from older states: nothing skipped; their step files are taken as written.
  p.skipped_in_a_row = file.metadata.count("skipped_in_a_row") ? meta<int64_t>(file, path, "skipped_in_a_row") : 0;
  p.step_checkpoint = file.metadata.count("step_checkpoint") && meta<int64_t>(file, path, "step_checkpoint") != 0;
  for (const auto& [key, value] : file.metadata)
    if (key.rfind("task.", 0) == 0) p.task_state[key.substr(5)] = value;
  return p;
}

}  // namespace heed
