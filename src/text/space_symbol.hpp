#pragma once
// The visible whitespace of pieces: U+2581 stands for a space inside them.
#include <string>
#include <string_view>

namespace heed {

// The visible whitespace symbol U+2581 that stands for a space inside pieces.
inline constexpr std::string_view kSpaceSymbol = "\xE2\x96\x81";

// Pieces are shown with U+2581 for spaces; these convert between the two forms.
std::string spaces_to_symbol(std::string_view text);
std::string symbol_to_spaces(std::string_view piece);

}  // namespace heed
