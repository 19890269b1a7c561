#pragma once
// Unicode property tables generated from Python (see unicode_tables.cpp for the version): the
// metrics reproduce sacreBLEU, which relies on Python's notion of whitespace, case and categories.
#include <cstddef>

namespace heed::metrics {

struct CodeRange {
  char32_t first, last;  // inclusive
};

struct LowerMapping {
  char32_t from;
  char32_t to[2];  // to[1] == 0 for a one-character lowercase
};

namespace tables {
extern const CodeRange punctuation[];  // general category P*
extern const size_t punctuation_size;
extern const CodeRange symbol[];  // S*
extern const size_t symbol_size;
extern const CodeRange number[];  // N*
extern const size_t number_size;
extern const CodeRange space[];  // str.isspace()
extern const size_t space_size;
extern const CodeRange cased[];  // cased and not case-ignorable (final sigma rule)
extern const size_t cased_size;
extern const CodeRange case_ignorable[];
extern const size_t case_ignorable_size;
extern const LowerMapping lower[];  // str.lower(), sorted by `from`, without U+03A3
extern const size_t lower_size;
}  // namespace tables

}  // namespace heed::metrics
