// sacreBLEU's tokenizers on tricky strings. Expected values come from sacreBLEU's own regexes run
// in Python (re for 13a/zh, the `regex` module for intl) and Python's str.lower()/str.split().
#include <catch2/catch.hpp>

#include "metrics/sacrebleu_tokenizers.hpp"
#include "metrics/unicode.hpp"
#include "util/error.hpp"

using namespace heed::metrics;

TEST_CASE("tokenizers match sacreBLEU on tricky strings") {
  // 13a
  CHECK(tokenize_13a("The price is 1,000.50 dollars, not 1.000,50.") ==
        "The price is 1,000.50 dollars , not 1.000,50 .");
  CHECK(tokenize_13a("In 2020. Then 10-20 people; well-known 3-4x.") ==
        "In 2020 . Then 10 - 20 people ; well-known 3 - 4x .");
  CHECK(tokenize_13a("Tom&amp;Jerry &lt;b&gt; &amp;lt; &quot;hi&quot; &apos;x&apos; &#39; &nbsp; <skipped>end") ==
        "Tom & Jerry < b > < \" hi \" & apos ; x & apos ; & # 39 ; & nbsp ; end");
  CHECK(tokenize_13a("Hello, world! (test) [x] {y} a/b a-b it's `q` ~t^ $5 #1 @me 50% a*b+c=d|e\\f") ==
        "Hello , world ! ( test ) [ x ] { y } a / b a-b it's ` q ` ~ t ^ $ 5 # 1 @ me 50 % a * b + c = d | e \\ f");
  CHECK(tokenize_13a("中文测试，句子。ABC中文.") == "中文测试，句子。ABC中文 .");
  CHECK(tokenize_13a("I ❤️ NY 😀! 👍🏽.") == "I ❤️ NY 😀 ! 👍🏽 .");
  CHECK(tokenize_13a("a\u00a0b : c\u2009d\u200be") == "a b : c d\u200be");
  CHECK(tokenize_13a("end.") == "end .");
  CHECK(tokenize_13a(".5 and ,5 a.b a,b 5.a") == ". 5 and , 5 a . b a , b 5 . a");
  CHECK(tokenize_13a("...") == ". . .");
  // intl
  CHECK(tokenize_intl("Hello, world! 1,000.50 2021.") == "Hello , world ! 1,000.50 2021.");
  CHECK(tokenize_intl("“Quoted” — dash… $5 €10 ±3") == "“ Quoted ” — dash … $ 5 € 10 ± 3");
  CHECK(tokenize_intl("a+b=c <x> 50%") == "a + b = c < x > 50%");
  CHECK(tokenize_intl("I ❤️ NY 😀!") == "I ❤ ️ NY 😀 !");
  CHECK(tokenize_intl("l'homme (test) 3.14, 2-3") == "l ' homme ( test ) 3.14 , 2-3");
  CHECK(tokenize_intl("¿Qué? ¡Sí! «text»") == "¿ Qué ? ¡ Sí ! « text »");
  CHECK(tokenize_intl("中文，句子。") == "中文 ， 句子 。");
  // zh
  CHECK(tokenize_zh("我爱北京天安门。2020年，GDP增长6.5%") == "我 爱 北 京 天 安 门 。 2020 年 ， GDP 增 长 6.5 %");
  CHECK(tokenize_zh("“引号”和—破折号…") == "“ 引 号 ” 和 — 破 折 号 …");
  CHECK(tokenize_zh("𠀀 ext B ⾡⾢") == "𠀀 ext B ⾡ ⾢");
  CHECK(tokenize_zh("  abc def. 2020.  ") == "abc def . 2020.");
  CHECK(tokenize_zh("Ａｂｃ full width \u3000 space") == "Ａ ｂ ｃ full width space");
  CHECK(tokenize_zh("☀ ✓ €5 \u2000x\u2001y") == "☀ ✓ € 5 x y");
  CHECK(tokenize_zh("😀 emoji") == "😀 emoji");
  // lower
  CHECK(python_lower("ÄÖÜ ẞ İstanbul ΣΑΣ ΟΔΟΣ. Σ") == "äöü ß i̇stanbul σας οδος. σ");
  CHECK(python_lower("ABC") == "abc");
  CHECK(python_lower("ΑΣ'Σ ΑΣ́") == "ασ'ς ας́");
}

TEST_CASE("char and none tokenizers") {
  CHECK(tokenize_char("ab c") == "a b c");
  CHECK(tokenize_char("a\u00a0b 😀é") == "a b 😀 é");
  CHECK(tokenize(BleuTokenizer::none, "  a  b. ") == "  a  b. ");
}

TEST_CASE("whitespace is Python's str.split()") {
  // NBSP, em space, ideographic space and U+0085 split; zero-width space and BOM do not.
  auto tokens = split_whitespace("a\u00a0b\u2003c\u200bd\ufeffe\u3000f\u0085g\r\n");
  REQUIRE(tokens.size() == 5);
  CHECK(tokens[0] == "a");
  CHECK(tokens[2] == "c\u200bd\ufeffe");
  CHECK(tokens[4] == "g");
  CHECK(python_rstrip("abc \t\r\u00a0\u3000") == "abc");
  CHECK(python_strip("\u2002 x y \u2002") == "x y");
  CHECK(collapse_whitespace("  a \t b  ") == "a b");
}

TEST_CASE("sacreBLEU's CJK table, quirks included") {
  CHECK(is_chinese_char(U'中'));
  CHECK(is_chinese_char(U'\u2001'));  // '\u20000' in sacreBLEU's table is U+2000 followed by '0'
  CHECK(!is_chinese_char(U'\u2000'));
  CHECK(is_chinese_char(U'\u2a6d'));
  CHECK(!is_chinese_char(U'\u2a6e'));
  CHECK(!is_chinese_char(U'\U00020000'));  // CJK Extension B is not matched
  CHECK(is_chinese_char(U'\uff01'));
  CHECK(!is_chinese_char(U'\U0001F600'));
}

TEST_CASE("Unicode categories for intl") {
  CHECK(is_punctuation(U'\u00bf'));
  CHECK(is_punctuation(U'\u3002'));
  CHECK(is_symbol(U'\u20ac'));
  CHECK(is_symbol(U'\U0001F600'));
  CHECK(is_number(U'\u0663'));  // Arabic-Indic three
  CHECK(!is_number(U'a'));
  CHECK(!is_punctuation(U'a'));
}

TEST_CASE("unknown tokenizer names are usage errors") {
  CHECK(parse_bleu_tokenizer("13a") == BleuTokenizer::k13a);
  CHECK(tokenizer_name(parse_bleu_tokenizer("char")) == "char");
  CHECK_THROWS_AS(parse_bleu_tokenizer("14"), heed::UsageError);
}
