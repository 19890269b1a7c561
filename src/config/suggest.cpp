#include "config/suggest.hpp"

#include <algorithm>
#include <vector>

#include "config/fields.hpp"

namespace heed::config_suggest {
namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string last_part(const std::string& path) {
  auto dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

// Every known key: fields and the sections that hold them.
std::vector<std::string> known_keys() {
  std::vector<std::string> keys;
  for (const auto& field : config_fields::all()) {
    for (size_t dot = field.path.find('.'); dot != std::string::npos; dot = field.path.find('.', dot + 1))
      keys.push_back(field.path.substr(0, dot));
    keys.push_back(field.path);
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

}  // namespace

std::string closest_key(const std::string& path) {
  std::string best;
  size_t best_distance = std::string::npos;
  for (const auto& key : known_keys()) {
    // A right name in the wrong section (training.beam -> decoding.beam) counts as close.
    size_t d = last_part(key) == last_part(path) ? 1 : edit_distance(key, path);
    if (d < best_distance) best = key, best_distance = d;
  }
  return best_distance <= std::max<size_t>(2, path.size() / 4) ? best : "";
}

std::string first_field_in(const std::string& section) {
  for (const auto& field : config_fields::all())
    if (field.path.rfind(section + ".", 0) == 0) return field.path;
  return section;
}

}  // namespace heed::config_suggest
