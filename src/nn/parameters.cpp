#include "nn/parameters.hpp"

#include <cmath>

#include "util/error.hpp"

namespace heed {

Var ParameterSet::add(const std::string& name, Tensor value) {
  if (contains(name)) throw Error("duplicate parameter name " + name);
  Var v(std::move(value), true);
  params_.emplace_back(name, v);
  return v;
}

void ParameterSet::alias(const std::string& name, const std::string& target) {
  get(target);
  aliases_[name] = target;
}

Var ParameterSet::get(const std::string& name) const {
  auto a = aliases_.find(name);
  const std::string& key = a == aliases_.end() ? name : a->second;
  for (const auto& [n, v] : params_)
    if (n == key) return v;
  throw Error("no parameter named " + name);
}

bool ParameterSet::contains(const std::string& name) const {
  if (aliases_.count(name)) return true;
  for (const auto& p : params_)
    if (p.first == name) return true;
  return false;
}

int64_t ParameterSet::count() const {
  int64_t n = 0;
  for (const auto& p : params_) n += p.second.value().numel();
  return n;
}

void ParameterSet::zero_grad() const {
  for (const auto& p : params_) p.second.zero_grad();
}

Tensor uniform_tensor(const Shape& shape, float bound, Rng& rng) {
  Tensor t = Tensor::empty(shape);
  rng.fill_uniform(t, -bound, bound);
  return t;
}

Tensor normal_tensor(const Shape& shape, float stddev, Rng& rng) {
  Tensor t = Tensor::empty(shape);
  rng.fill_normal(t, 0.f, stddev);
  return t;
}

Tensor xavier_uniform_tensor(const Shape& shape, Rng& rng) {
  const float bound = std::sqrt(6.f / static_cast<float>(shape[0] + shape[1]));
  return uniform_tensor(shape, bound, rng);
}

}  // namespace heed
