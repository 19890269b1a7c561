#include "text/script.hpp"

#include <algorithm>
#include <iterator>

#include "text/space_symbol.hpp"
#include "util/utf8.hpp"

namespace heed {

namespace {

enum : ScriptClass {
  kLatin = 1,
  kGreek,
  kCyrillic,
  kArmenian,
  kHebrew,
  kArabic,
  kTibetan,
  kGeorgian,
  kHangul,
  kEthiopic,
  kHan
};
constexpr ScriptClass kInherited = kAnyScript;
constexpr ScriptClass kCommon = kCommonScript;

struct ScriptRange {
  char32_t first, last;  // inclusive
  ScriptClass script;
};

// Sorted, non-overlapping. Gaps fall back to one class per 128-code-point block.
constexpr ScriptRange kRanges[] = {
    {0x0000, 0x0040, kCommon},    {0x0041, 0x005A, kLatin},       {0x005B, 0x0060, kCommon},
    {0x0061, 0x007A, kLatin},     {0x007B, 0x00A9, kCommon},      {0x00AA, 0x00AA, kLatin},
    {0x00AB, 0x00B9, kCommon},    {0x00BA, 0x00BA, kLatin},       {0x00BB, 0x00BF, kCommon},
    {0x00C0, 0x00D6, kLatin},     {0x00D7, 0x00D7, kCommon},      {0x00D8, 0x00F6, kLatin},
    {0x00F7, 0x00F7, kCommon},    {0x00F8, 0x02AF, kLatin},       {0x02B0, 0x02FF, kCommon},
    {0x0300, 0x036F, kInherited}, {0x0370, 0x03FF, kGreek},       {0x0400, 0x052F, kCyrillic},
    {0x0530, 0x058F, kArmenian},  {0x0590, 0x05FF, kHebrew},      {0x0600, 0x06FF, kArabic},
    {0x0750, 0x077F, kArabic},    {0x0870, 0x08FF, kArabic},      {0x0F00, 0x0FFF, kTibetan},
    {0x10A0, 0x10FF, kGeorgian},  {0x1100, 0x11FF, kHangul},      {0x1200, 0x139F, kEthiopic},
    {0x1AB0, 0x1AFF, kInherited}, {0x1C80, 0x1C8F, kCyrillic},    {0x1C90, 0x1CBF, kGeorgian},
    {0x1D00, 0x1DBF, kLatin},     {0x1DC0, 0x1DFF, kInherited},   {0x1E00, 0x1EFF, kLatin},
    {0x1F00, 0x1FFF, kGreek},     {0x2000, 0x200B, kCommon},      {0x200C, 0x200D, kInherited},
    {0x200E, 0x20CF, kCommon},    {0x20D0, 0x20FF, kInherited},   {0x2100, 0x2BFF, kCommon},
    {0x2C60, 0x2C7F, kLatin},     {0x2D00, 0x2D2F, kGeorgian},    {0x2DE0, 0x2DFF, kCyrillic},
    {0x2E00, 0x2E7F, kCommon},    {0x2E80, 0x2FDF, kHan},         {0x3000, 0x3004, kCommon},
    {0x3005, 0x3007, kHan},       {0x3008, 0x3020, kCommon},      {0x3021, 0x3029, kHan},
    {0x302A, 0x302F, kInherited}, {0x3030, 0x303F, kCommon},      {0x3040, 0x30FF, kHan},
    {0x3130, 0x318F, kHangul},    {0x31F0, 0x31FF, kHan},         {0x3400, 0x4DBF, kHan},
    {0x4E00, 0x9FFF, kHan},       {0xA640, 0xA69F, kCyrillic},    {0xA720, 0xA7FF, kLatin},
    {0xA960, 0xA97F, kHangul},    {0xAB30, 0xAB6F, kLatin},       {0xAC00, 0xD7FF, kHangul},
    {0xF900, 0xFAFF, kHan},       {0xFB00, 0xFB06, kLatin},       {0xFB13, 0xFB17, kArmenian},
    {0xFB1D, 0xFB4F, kHebrew},    {0xFB50, 0xFDFF, kArabic},      {0xFE00, 0xFE0F, kInherited},
    {0xFE20, 0xFE2F, kInherited}, {0xFE30, 0xFE6F, kCommon},      {0xFE70, 0xFEFF, kArabic},
    {0xFF00, 0xFF20, kCommon},    {0xFF21, 0xFF3A, kLatin},       {0xFF3B, 0xFF40, kCommon},
    {0xFF41, 0xFF5A, kLatin},     {0xFF5B, 0xFF65, kCommon},      {0xFF66, 0xFF9F, kHan},
    {0xFFA0, 0xFFDF, kHangul},    {0xFFE0, 0xFFFF, kCommon},      {0x1F000, 0x1FAFF, kCommon},
    {0x20000, 0x3FFFF, kHan},     {0xE0100, 0xE01EF, kInherited},
};

constexpr bool sorted_and_disjoint() {
  for (size_t i = 0; i + 1 < std::size(kRanges); ++i)
    if (kRanges[i].first > kRanges[i].last || kRanges[i].last >= kRanges[i + 1].first) return false;
  return true;
}
static_assert(sorted_and_disjoint(), "script ranges must be sorted and disjoint for the binary search");

constexpr ScriptClass kFirstBlockClass = 1000;

}  // namespace

ScriptClass script_of(char32_t c) {
  const auto* end = std::end(kRanges);
  const auto* it =
      std::upper_bound(std::begin(kRanges), end, c, [](char32_t x, const ScriptRange& r) { return x < r.first; });
  if (it != std::begin(kRanges) && c <= (it - 1)->last) return (it - 1)->script;
  return kFirstBlockClass + static_cast<ScriptClass>(c >> 7);
}

ScriptClass script_of_piece(std::string_view utf8) {
  for (size_t i = 0; i < utf8.size();) {
    const bool well_formed = utf8_char_length(utf8, i) > 1 || static_cast<unsigned char>(utf8[i]) < 0x80;
    const char32_t c = next_code_point(utf8, i);
    const ScriptClass s = !well_formed ? kCommonScript : c == U' ' || c == U'\u2581' ? kAnyScript : script_of(c);
    if (s != kAnyScript) return s;
  }
  return kAnyScript;
}

}  // namespace heed
