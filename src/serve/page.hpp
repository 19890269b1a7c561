#pragma once
// GET /: one static HTML page with a text box that translates as you type (POST /v1/translate
// a moment after the last keystroke; a newer answer replaces an older one). `/?text=...` fills
// the box and translates at once, for links and screenshots. No framework, nothing fetched but
// the translations.
#include <string_view>

namespace heed::serve {

std::string_view page_html();

}  // namespace heed::serve
