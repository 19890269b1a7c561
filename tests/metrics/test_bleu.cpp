// The metrics library API on small hand-computed examples (the sacreBLEU parity cases run the
// CLI in tests/cli/test_bleu_cases.cpp).
#include <catch2/catch.hpp>

#include <cmath>

#include "metrics/bleu.hpp"
#include "metrics/chrf.hpp"
#include "metrics/ter.hpp"
#include "util/error.hpp"

using namespace heed::metrics;

TEST_CASE("corpus_bleu on in-memory strings") {
  // 1-grams 5/6, 2-grams 3/5, 3-grams 2/4, 4-grams 1/3 -> (1/12)^(1/4).
  BleuScore s = corpus_bleu({"the cat sat on the mat"}, {{"the cat sat on a mat"}});
  CHECK(s.counts == std::array<int64_t, 4>{5, 3, 2, 1});
  CHECK(s.totals == std::array<int64_t, 4>{6, 5, 4, 3});
  CHECK(s.bp == 1.0);
  CHECK(s.score == Approx(100 * std::pow(1.0 / 12, 0.25)).epsilon(1e-12));
  CHECK(s.verbose() == "83.3/60.0/50.0/33.3 (BP = 1.000 ratio = 1.000 hyp_len = 6 ref_len = 6)");

  CHECK(corpus_bleu({"a b c d e"}, {{"a b c d e"}}).score == Approx(100));
  CHECK(corpus_bleu({}, {{}}).score == 0);             // no segments
  CHECK(corpus_bleu({""}, {{"a b c d"}}).score == 0);  // empty hypothesis
  CHECK_THROWS_AS(corpus_bleu({"a"}, {{"a", "b"}}), heed::Error);
}

TEST_CASE("BLEU brevity penalty, references and smoothing") {
  BleuScore shorter = corpus_bleu({"a b c d"}, {{"a b c d e f g h"}});
  CHECK(shorter.bp == Approx(std::exp(1 - 8.0 / 4)));
  // closest reference length; on a tie the shorter one
  BleuScore tie = corpus_bleu({"a b c d e"}, {{"a b c d"}, {"a b c d e x"}});
  CHECK(tie.ref_len == 4);
  // clipped by the maximum count over references
  BleuScore clip = corpus_bleu({"a a a"}, {{"a b"}, {"a a c"}});
  CHECK(clip.counts[0] == 2);

  // no 3- or 4-gram matches
  const std::vector<std::string> hyp{"a b c x y z"};
  const std::vector<std::vector<std::string>> ref{{"a b q c x r"}};
  BleuOptions exp_options;
  BleuScore e = corpus_bleu(hyp, ref, exp_options);
  CHECK(e.precisions[2] == Approx(100.0 / (2 * 4)));
  CHECK(e.precisions[3] == Approx(100.0 / (4 * 3)));
  BleuOptions floor_options;
  floor_options.smoothing = BleuSmoothing::floor;
  CHECK(corpus_bleu(hyp, ref, floor_options).precisions[2] == Approx(100 * 0.1 / 4));
  BleuOptions addk;
  addk.smoothing = BleuSmoothing::add_k;
  addk.smooth_value = 2;
  BleuScore k = corpus_bleu(hyp, ref, addk);
  CHECK(k.precisions[1] == Approx(100.0 * (2 + 2) / (5 + 2)));
  CHECK(k.counts[1] == 2);  // raw counts are reported (bigrams "a b", "c x")
  BleuOptions none;
  none.smoothing = BleuSmoothing::none;
  CHECK(corpus_bleu(hyp, ref, none).score < 1e-10);

  // a 3-token corpus has no 4-grams: 0 unless effective order is on
  CHECK(corpus_bleu({"the cat ."}, {{"the cat ."}}).score == 0);
  BleuOptions eff;
  eff.effective_order = true;
  CHECK(corpus_bleu({"the cat ."}, {{"the cat ."}}, eff).score == Approx(100));
}

TEST_CASE("BLEU signature and option names") {
  BleuOptions o;
  CHECK(bleu_signature(o, 1, "heed-0.1.0") == "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:heed-0.1.0");
  o.lowercase = true;
  o.tokenizer = BleuTokenizer::zh;
  o.smoothing = parse_bleu_smoothing("floor");
  CHECK(bleu_signature(o, 2, "v") == "nrefs:2|case:lc|eff:no|tok:zh|smooth:floor[0.10]|version:v");
  o.smoothing = BleuSmoothing::add_k;
  CHECK(bleu_signature(o, 1, "v").find("smooth:add-k[1.00]") != std::string::npos);
  CHECK_THROWS_AS(parse_bleu_smoothing("linear"), heed::UsageError);
}

TEST_CASE("lowercase BLEU uses full Unicode lowercasing") {
  BleuOptions lc;
  lc.lowercase = true;
  CHECK(corpus_bleu({"ÄRGER ÜBER ÖL UND ŒUVRE"}, {{"ärger über öl und œuvre"}}, lc).score == Approx(100));
}

TEST_CASE("chrF and chrF++") {
  CHECK(corpus_chrf({"abc def"}, {{"abcdef"}}) == Approx(100));  // whitespace is removed
  CHECK(corpus_chrf({"xyz"}, {{"abc"}}) == 0);
  // orders 1 and 2 only: P = 1, R = (2/3 + 1/2) / 2, F2 = 5PR / (4P + R)
  CHECK(corpus_chrf({"ab"}, {{"abc"}}) == Approx(100 * 35.0 / 55.0).epsilon(1e-12));
  ChrfOptions plus{6, 2, 2};
  CHECK(chrf_name(plus) == "chrF2++");
  CHECK(chrf_signature(plus, 1, "v") == "nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|version:v");
  CHECK(corpus_chrf({"the cat."}, {{"the cat ."}}, plus) == Approx(100));  // "cat." splits as "cat" "."
  // "thecat" vs "catthe": char precision = recall = (1 + 4/5 + 2/4 + 0 + 0 + 0) / 6; words: 1 and 0
  CHECK(corpus_chrf({"the cat"}, {{"cat the"}}) == Approx(100 * 2.3 / 6).epsilon(1e-12));
  CHECK(corpus_chrf({"the cat"}, {{"cat the"}}, plus) == Approx(100 * 3.3 / 8).epsilon(1e-12));
  CHECK_THROWS_AS(validate(ChrfOptions{7, 0, 2}), heed::UsageError);
}

TEST_CASE("TER with shifts") {
  CHECK(corpus_ter({"a b c d"}, {{"a b c d"}}) == 0);
  CHECK(corpus_ter({"a b c d"}, {{"a b c d e"}}) == Approx(20));
  CHECK(corpus_ter({"d a b c"}, {{"a b c d"}}) == Approx(25));  // one shift instead of two edits
  CHECK(corpus_ter({"A B"}, {{"a b"}}) == 0);                   // case-insensitive
  CHECK(corpus_ter({"x"}, {{""}}) == Approx(100));              // empty reference
  // Several references: the fewest edits over the average reference length. (Found by
  // fuzz_metrics: the word ids kept views of an earlier reference's freed text.)
  CHECK(corpus_ter({"Wait... what?! Are you sure"}, {{"x y"}, {"Wait... what?! Are you sure (really sure)"}}) ==
        Approx(100.0 * 2 / 4.5));  // two insertions over (2 + 7) / 2 words
  CHECK(corpus_ter({"a b c"}, {{"d e f g"}, {"a b c"}, {"h"}}) == Approx(0));
  CHECK(corpus_ter({""}, {{""}}) == 0);
  CHECK(ter_signature(1, "v") == "nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:v");
}
