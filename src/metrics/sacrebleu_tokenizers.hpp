#pragma once
// sacreBLEU's BLEU tokenizers (13a, intl, zh, char, none), reproduced character for character.
// Each returns the tokens joined by single spaces, as sacreBLEU's tokenizers return them.
#include <string>
#include <string_view>

namespace heed::metrics {

enum class BleuTokenizer { k13a, intl, zh, character, none };

// "13a", "intl", "zh", "char", "none"; throws heed::UsageError for anything else.
BleuTokenizer parse_bleu_tokenizer(std::string_view name);
std::string_view tokenizer_name(BleuTokenizer tokenizer);

std::string tokenize(BleuTokenizer tokenizer, std::string_view line);

// mteval-v13a: entity unescaping, ASCII punctuation split, "." and "," kept inside numbers.
std::string tokenize_13a(std::string_view line);
// mteval-v14 international: Unicode punctuation \p{P} split unless next to a digit, symbols \p{S}.
std::string tokenize_intl(std::string_view line);
// Chinese: every character in sacreBLEU's CJK table is a token, then the 13a regexes.
std::string tokenize_zh(std::string_view line);
// Every non-whitespace character is a token.
std::string tokenize_char(std::string_view line);

// sacreBLEU's _is_chinese_char, including the quirks of its range table (see tokenizers.cpp).
bool is_chinese_char(char32_t c);

}  // namespace heed::metrics
