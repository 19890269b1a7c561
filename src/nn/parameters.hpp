#pragma once
// The named parameters of a model, in creation order. Names are the tensor names in
// model.safetensors (dotted paths, PyTorch's state_dict names for the reference models, so a
// checkpoint opens in Python under the same keys). A tied parameter is stored once; its other
// names are aliases.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tensor/autograd.hpp"
#include "tensor/random.hpp"

namespace heed {

class ParameterSet {
 public:
  Var add(const std::string& name, Tensor value);  // requires_grad; throws on a duplicate name
  void alias(const std::string& name, const std::string& target);

  const std::vector<std::pair<std::string, Var>>& all() const { return params_; }
  const std::map<std::string, std::string>& aliases() const { return aliases_; }
  Var get(const std::string& name) const;  // throws naming the parameter when missing
  bool contains(const std::string& name) const;
  int64_t count() const;  // scalar parameters, tied ones once
  void zero_grad() const;

 private:
  std::vector<std::pair<std::string, Var>> params_;
  std::map<std::string, std::string> aliases_;
};

// Initialisers (PyTorch's defaults for the layers we mirror).
Tensor uniform_tensor(const Shape& shape, float bound, Rng& rng);  // U(−bound, bound)
Tensor normal_tensor(const Shape& shape, float stddev, Rng& rng);  // N(0, stddev²)
Tensor xavier_uniform_tensor(const Shape& shape, Rng& rng);        // [out, in]

}  // namespace heed
