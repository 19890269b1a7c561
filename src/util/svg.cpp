#include "util/svg.hpp"

#include <algorithm>
#include <cstdio>

#include "util/utf8.hpp"

namespace heed::svg {

std::string escape(const std::string& text) {
  // Labels come from user text and model output: an invalid byte or a control character would
  // make the document invalid XML, which browsers refuse to show at all. printable() turns them
  // into visible \xNN.
  std::string out;
  for (char c : printable(text)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

int characters(const std::string& utf8) {
  return static_cast<int>(std::count_if(utf8.begin(), utf8.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

std::string open_document(int width, int height, int font_size) {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                "font-family=\"sans-serif\" font-size=\"%d\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
                width, height, width, height, font_size);
  return buf;
}

}  // namespace heed::svg
