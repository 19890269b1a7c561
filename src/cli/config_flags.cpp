#include "cli/config_flags.hpp"

#include <algorithm>

#include "config/config.hpp"
#include "util/error.hpp"

namespace heed::cli {
namespace {

std::string flag_name(const std::string& path) {
  std::string name = "--" + path.substr(path.rfind('.') + 1);
  std::replace(name.begin(), name.end(), '_', '-');
  return name;
}

}  // namespace

std::vector<std::string> ConfigFlags::section_fields(std::string_view section, const std::vector<std::string>& except) {
  std::vector<std::string> paths;
  for (const FieldInfo& field : fields_of_section(section))
    if (std::find(except.begin(), except.end(), field.path) == except.end()) paths.push_back(field.path);
  return paths;
}

ConfigFlags::ConfigFlags(CLI::App& command, const std::vector<std::string>& paths) {
  std::vector<FieldInfo> fields;
  for (const auto& path : paths) {
    const auto dot = path.rfind('.');
    for (FieldInfo& f : fields_of_section(std::string_view(path).substr(0, dot == std::string::npos ? 0 : dot)))
      if (f.path == path) fields.push_back(std::move(f));
  }
  if (fields.size() != paths.size()) throw Error("ConfigFlags: a path given is not a config field");
  for (const FieldInfo& field : fields) {
    Flag& flag = flags_.emplace_back();
    flag.path = field.path;
    flag.name = flag_name(field.path);
    flag.is_boolean = field.is_boolean;
    std::string help = field.doc + " (" + field.path + "; default " + field.default_value + ", or the model's config)";
    if (flag.is_boolean) {
      flag.option = command.add_flag(flag.name, flag.set, help);
    } else {
      flag.option = command.add_option(flag.name, flag.value, help + "; " + field.allowed);
      flag.option->type_name("VALUE");
      // Checked as the command line is parsed, by the field table, before anything is loaded.
      const std::string path = field.path;
      flag.option->check(CLI::Validator([path](std::string& text) { return check_field_value(path, text); }, ""));
    }
  }
}

void ConfigFlags::apply(nlohmann::json& j) const {
  for (const Flag& flag : flags_)
    if (flag.option->count()) apply_override(j, flag.path + "=" + text_of(flag), flag.name);
}

std::vector<std::string> ConfigFlags::overrides() const {
  std::vector<std::string> out;
  for (const Flag& flag : flags_)
    if (flag.option->count()) out.push_back(flag.path + "=" + text_of(flag));
  return out;
}

bool ConfigFlags::given(std::string_view path) const {
  for (const Flag& flag : flags_)
    if (flag.path == path) return flag.option->count() > 0;
  return false;
}

}  // namespace heed::cli
