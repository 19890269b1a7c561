#include "text/space_symbol.hpp"

namespace heed {

std::string spaces_to_symbol(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 8);
  for (char c : text) {
    if (c == ' ')
      out += kSpaceSymbol;
    else
      out += c;
  }
  return out;
}

std::string symbol_to_spaces(std::string_view piece) {
  std::string out;
  out.reserve(piece.size());
  for (size_t i = 0; i < piece.size();) {
    if (piece.substr(i, kSpaceSymbol.size()) == kSpaceSymbol) {
      out += ' ';
      i += kSpaceSymbol.size();
    } else {
      out += piece[i++];
    }
  }
  return out;
}

}  // namespace heed
