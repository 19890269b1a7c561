#pragma once
// What heed's SVG pictures (attention maps, learning curves) share: escaping text for XML, the
// width of a label, and the document's opening with a white background.
#include <string>

namespace heed::svg {

std::string escape(const std::string& text);
int characters(const std::string& utf8);  // code points: a label's width in characters
// `<svg ...>` of the given size in px (sans-serif, `font_size` px) and a white background; the
// caller adds the picture and "</svg>\n".
std::string open_document(int width, int height, int font_size);

}  // namespace heed::svg
