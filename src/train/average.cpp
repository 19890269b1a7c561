#include "train/average.hpp"

#include "util/error.hpp"

namespace heed {

SafeTensorFile average_checkpoints(const std::vector<std::string>& paths) {
  if (paths.empty()) throw UsageError("average: no checkpoints given");
  SafeTensorFile first = read_safetensors(paths[0]);
  std::map<std::string, std::vector<double>> sums;
  for (const auto& [name, t] : first.tensors) {
    if (t.dtype != "F32") throw Error(paths[0] + ": tensor " + name + " is " + t.dtype + ", only F32 can be averaged");
    auto v = t.as_f32();
    sums[name].assign(v.begin(), v.end());
  }
  for (size_t k = 1; k < paths.size(); ++k) {
    SafeTensorFile f = read_safetensors(paths[k]);
    if (f.tensors.size() != first.tensors.size())
      throw Error(paths[k] + ": holds " + std::to_string(f.tensors.size()) + " tensors, " + paths[0] + " holds " +
                  std::to_string(first.tensors.size()) + ": not checkpoints of the same model");
    for (const auto& [name, t] : f.tensors) {
      auto it = first.tensors.find(name);
      if (it == first.tensors.end()) throw Error(paths[k] + ": tensor " + name + " is not in " + paths[0]);
      if (t.dtype != "F32" || t.shape != it->second.shape)
        throw Error(paths[k] + ": tensor " + name + " differs in dtype or shape from " + paths[0]);
      auto v = t.as_f32();
      auto& s = sums[name];
      for (size_t i = 0; i < v.size(); ++i) s[i] += v[i];
    }
  }
  SafeTensorFile out;
  out.metadata = first.metadata;
  out.metadata["averaged_from"] = std::to_string(paths.size()) + " checkpoints";
  for (auto& [name, s] : sums) {
    std::vector<float> mean(s.size());
    for (size_t i = 0; i < s.size(); ++i) mean[i] = static_cast<float>(s[i] / paths.size());
    out.tensors[name] = SafeTensor::from_f32(first.tensors[name].shape, mean);
  }
  return out;
}

}  // namespace heed
