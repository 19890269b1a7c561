#pragma once
// A number from text that must be that number and nothing else: std::from_chars over the whole
// string (no leading space or '+', no trailing characters, no wrap-around of "-1" into an
// unsigned type, no locale), nullopt otherwise.
#include <charconv>
#include <optional>
#include <string_view>

namespace heed {

template <class T>
std::optional<T> parse_number(std::string_view text) {
  T value{};
  const char* last = text.data() + text.size();
  const auto [end, ec] = std::from_chars(text.data(), last, value);
  if (text.empty() || ec != std::errc() || end != last) return std::nullopt;
  return value;
}

}  // namespace heed
