#pragma once
// The one UTF-8 decoder: stepping over characters, decoding and encoding code points, and
// validation. Input is checked once where it enters (util/text_lines, the tokenizer and
// safetensors readers); code past that point steps and decodes without checking again, and a
// stray byte there counts as one character of its own.
#include <cstddef>
#include <string>
#include <string_view>

namespace heed {

// Length in bytes of the character starting at s[i]: 1..4, or 1 for a byte that does not begin
// a complete sequence of well-formed continuation bytes.
size_t utf8_char_length(std::string_view s, size_t i);
// Number of characters in s, counted as utf8_char_length steps.
size_t utf8_length(std::string_view s);
// Decodes the character starting at s[i] and advances i past it; a stray byte decodes as itself.
char32_t next_code_point(std::string_view s, size_t& i);
void append_utf8(std::string& out, char32_t c);

// Byte offset of the first invalid UTF-8 sequence in `s`, or npos when `s` is valid UTF-8
// (overlongs, surrogates and code points above U+10FFFF are invalid).
size_t find_invalid_utf8(std::string_view s);
// Replaces every invalid sequence by U+FFFD; returns how many were replaced.
size_t replace_invalid_utf8(std::string& s);
// `s` safe to show on a terminal: valid UTF-8 is kept, every byte of an invalid sequence and
// every control character (tab included, to keep a message on one line) becomes "\xNN".
std::string printable(std::string_view s);

}  // namespace heed
