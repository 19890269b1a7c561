// The config loader: JSON text (file:line:column errors, duplicate keys, unknown keys with
// suggestions, types, ranges, rules across fields), then an override taken from the input's last
// line. A config that loads must survive to_json and load again to the same config.
#include <nlohmann/json.hpp>

#include "config/config.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace heed;
  const std::string input = fuzz::text(data, size);
  const size_t last_line = input.rfind('\n');
  if (fuzz::expect_errors_only([&] {
        const Config config = config_from_text(input, "fuzz.json");
        const Config again = config_from_json(to_json(config), "round trip");
        if (!(again == config)) fuzz::broken("to_json does not load back to the same config");
      }))
    ++fuzz::accepted_inputs;
  if (last_line != std::string::npos)
    fuzz::expect_errors_only([&] { config_from_text("{}", "fuzz.json", {input.substr(last_line + 1)}); });
  return 0;
}
