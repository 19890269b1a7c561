// The one UTF-8 decoder: stepping, decoding, encoding and validation.
#include <catch2/catch.hpp>

#include <string>

#include "util/utf8.hpp"

using namespace heed;

TEST_CASE("code points decode, step and encode back", "[utf8]") {
  const std::string text = "a\xC3\xA9\xE2\x96\x81\xF0\x9F\x98\x80";  // a é ▁ 😀
  std::u32string decoded;
  for (size_t i = 0; i < text.size();) decoded.push_back(next_code_point(text, i));
  CHECK(decoded == U"a\u00E9\u2581\U0001F600");
  CHECK(utf8_length(text) == 4);
  CHECK(utf8_char_length(text, 1) == 2);
  CHECK(utf8_char_length(text, 3) == 3);
  CHECK(utf8_char_length(text, 6) == 4);
  std::string encoded;
  for (char32_t c : decoded) append_utf8(encoded, c);
  CHECK(encoded == text);
}

TEST_CASE("a stray byte is one character of its own", "[utf8]") {
  const std::string text = "x\xC3y\x80";  // a lead byte without its continuation, a lone continuation
  CHECK(utf8_length(text) == 4);
  size_t i = 1;
  CHECK(next_code_point(text, i) == 0xC3);
  CHECK(i == 2);
}

TEST_CASE("validation finds overlongs, surrogates, out-of-range and truncated sequences", "[utf8]") {
  CHECK(find_invalid_utf8("plain \xC3\xA9 text") == std::string::npos);
  CHECK(find_invalid_utf8("ab\xC0\xAF") == 2);        // overlong '/'
  CHECK(find_invalid_utf8("\xE0\x80\xAF") == 0);      // overlong, 3 bytes
  CHECK(find_invalid_utf8("a\xED\xA0\x80") == 1);     // surrogate U+D800
  CHECK(find_invalid_utf8("\xF4\x90\x80\x80") == 0);  // above U+10FFFF
  CHECK(find_invalid_utf8("ok\xE2\x96") == 2);        // cut short
  CHECK(find_invalid_utf8("ok\xFF") == 2);            // never a lead byte
  std::string s =
      "a\xFF"
      "b\xE2\x96";
  CHECK(replace_invalid_utf8(s) == 2);
  CHECK(s ==
        "a\xEF\xBF\xBD"
        "b\xEF\xBF\xBD");
}
