#pragma once
// Maps the words of one segment (hypothesis and references) to small integer ids, so n-grams of
// words can be packed into NgramKey. Reused across segments to keep its allocation.
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace heed::metrics {

class WordIds {
 public:
  void clear() { ids_.clear(); }
  // Appends the id of every word to `out` (the views must outlive the next clear()).
  void assign(const std::vector<std::string_view>& words, std::vector<uint32_t>& out) {
    out.clear();
    for (auto w : words) {
      auto [it, inserted] = ids_.try_emplace(w, static_cast<uint32_t>(ids_.size()));
      out.push_back(it->second);
    }
  }

 private:
  std::unordered_map<std::string_view, uint32_t> ids_;
};

}  // namespace heed::metrics
