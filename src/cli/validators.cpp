#include "cli/validators.hpp"

#include <cmath>
#include <cstdio>

#include "util/parse_number.hpp"

namespace heed::cli {

CLI::Validator whole_number(int64_t min, int64_t max) {
  const bool bounded = max != std::numeric_limits<int>::max();
  const std::string expected = bounded ? "an integer from " + std::to_string(min) + " to " + std::to_string(max)
                                       : "an integer >= " + std::to_string(min);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const std::optional<int64_t> value = parse_number<int64_t>(text);
        if (!value || *value < min || *value > max) return "got " + text + ", expected " + expected;
        return "";
      },
      bounded ? "[" + std::to_string(min) + ".." + std::to_string(max) + "]" : ">=" + std::to_string(min));
}

CLI::Validator number_from(double min, bool exclusive) {
  char shown[32];
  std::snprintf(shown, sizeof shown, "%g", min);
  const std::string limit = std::string(exclusive ? "> " : ">= ") + shown;
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const std::optional<double> value = parse_number<double>(text);
        if (!value || !std::isfinite(*value) || *value < min || (exclusive && *value == min))
          return "got " + text + ", expected a number " + limit;
        return "";
      },
      limit);
}

}  // namespace heed::cli
