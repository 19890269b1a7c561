#pragma once
// Output lines and " ||| "-separated fields, as the CLI tests read heed's outputs.
#include <sstream>
#include <string>
#include <vector>

namespace heed::test {

inline std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

inline std::vector<std::string> split_fields(const std::string& line) {  // on " ||| "
  std::vector<std::string> fields;
  size_t start = 0;
  for (size_t p; (p = line.find(" ||| ", start)) != std::string::npos; start = p + 5)
    fields.push_back(line.substr(start, p - start));
  fields.push_back(line.substr(start));
  return fields;
}

}  // namespace heed::test
