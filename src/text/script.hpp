#pragma once
// Writing-system classes for BPE training. Like SentencePiece (split_by_unicode_script and
// split_by_number, both on by default), a learned piece never mixes letters of one script with
// letters of another or with digits, punctuation and symbols: "file." stays "file" + ".", and
// "x86" stays "x" + "86". Without this rule BPE spends merges on glued word+punctuation pieces,
// and sentences come out a few percent shorter than SentencePiece's at the same vocabulary.
//
// The classes are coarse, from code-point ranges rather than the full Unicode Script property:
// the major scripts by their blocks, Han with Hiragana and Katakana as one class (as
// SentencePiece does), digits/punctuation/symbols as "common", and code points of blocks not
// listed in a class of their own block. Combining marks, the space and U+2581 join whatever they
// touch (a piece may start with the space symbol whatever its script).
#include <cstdint>
#include <string_view>

namespace heed {

using ScriptClass = int32_t;
inline constexpr ScriptClass kAnyScript = -1;  // space symbol, combining marks
inline constexpr ScriptClass kCommonScript = 0;

ScriptClass script_of(char32_t c);

// The class of a piece (its characters must share one, ignoring kAnyScript): the first class
// other than kAnyScript, or kAnyScript. Bytes that are not well-formed UTF-8 are kCommonScript.
ScriptClass script_of_piece(std::string_view utf8);

// Whether pieces of these classes may merge into one piece.
inline bool scripts_compatible(ScriptClass a, ScriptClass b) { return a == kAnyScript || b == kAnyScript || a == b; }

}  // namespace heed
