#include "cli/validators.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace heed::cli {

CLI::Validator whole_number(int64_t min, int64_t max) {
  const bool bounded = max != std::numeric_limits<int>::max();
  const std::string expected = bounded ? "an integer from " + std::to_string(min) + " to " + std::to_string(max)
                                       : "an integer >= " + std::to_string(min);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        int64_t value = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max)
          return "got " + text + ", expected " + expected;
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
        double value = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value < min ||
            (exclusive && value == min))
          return "got " + text + ", expected a number " + limit;
        return "";
      },
      limit);
}

}  // namespace heed::cli
