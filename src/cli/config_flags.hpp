#pragma once
// Command-line flags generated from config fields: decoding.max_length_ratio becomes
// --max-length-ratio, its help the field's description and default from the field table. A value
// given on the command line is applied as an override of that field, so the table parses and
// validates it, once, like a --set or a config file; a boolean field is a flag (true), or
// --flag=false.
// A new config field thus becomes a flag without new CLI code.
#include <CLI/CLI.hpp>
#include <nlohmann/json_fwd.hpp>

#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace heed::cli {

class ConfigFlags {
 public:
  // One flag for each of `paths` (full field paths, e.g. "decoding.beam").
  ConfigFlags(CLI::App& command, const std::vector<std::string>& paths);

  // Every field of `section` but those in `except`.
  static std::vector<std::string> section_fields(std::string_view section, const std::vector<std::string>& except = {});

  // Applies the flags given, in the order of `paths`, to the config `j` (errors name the flag).
  void apply(nlohmann::json& j) const;
  // The flags given as --set overrides ("training.resume=true"), for load_config.
  std::vector<std::string> overrides() const;
  bool given(std::string_view path) const;

 private:
  struct Flag {
    std::string path, name;
    std::string value;
    bool is_boolean = false, set = false;
    CLI::Option* option = nullptr;
  };
  // The value given: a boolean flag's is true, or what --flag=VALUE said (CLI11 reads
  // --allow-unk=false as false).
  static std::string text_of(const Flag& flag) { return flag.is_boolean ? (flag.set ? "true" : "false") : flag.value; }
  std::deque<Flag> flags_;  // stable addresses: CLI11 writes into value / set
};

}  // namespace heed::cli
