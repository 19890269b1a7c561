// The BLEU / chrF / TER scorer on one segment, as `heed bleu` reads it (valid UTF-8 lines): the
// first byte picks the options (BLEU tokenizer, lowercase, smoothing, chrF++ or not), the rest is
// "hypothesis\nreference[\nreference2]". Every score is finite and in its range; TER of a
// segment against itself is 0.
#include <cmath>

#include "fuzz_common.hpp"
#include "metrics/bleu.hpp"
#include "metrics/chrf.hpp"
#include "metrics/ter.hpp"
#include "metrics/unicode.hpp"
#include "util/text_lines.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace heed;
  using namespace heed::metrics;
  if (size == 0) return 0;
  const uint8_t choice = data[0];
  std::string input = fuzz::text(data + 1, size - 1);
  if (find_invalid_utf8(input) != std::string::npos) return 0;  // the CLI refuses it, naming the line
  std::vector<std::string> lines;
  for (size_t start = 0;;) {
    const size_t end = input.find('\n', start);
    const std::string line = input.substr(start, end == std::string::npos ? std::string::npos : end - start);
    lines.emplace_back(python_rstrip(line));
    if (end == std::string::npos || lines.size() == 3) break;
    start = end + 1;
  }
  const std::string hyp = lines[0];
  std::vector<std::string_view> refs(lines.begin() + (lines.size() > 1 ? 1 : 0), lines.end());

  BleuOptions bleu;
  bleu.tokenizer = static_cast<BleuTokenizer>(choice % 5);
  bleu.lowercase = choice & 8;
  bleu.smoothing = static_cast<BleuSmoothing>((choice >> 4) % 4);
  bleu.effective_order = choice & 64;
  const BleuScore b = bleu_from_stats(BleuSegmentScorer(bleu).stats(hyp, refs), bleu);
  if (!(b.score >= 0 && b.score <= 100.0000001)) fuzz::broken("BLEU " + std::to_string(b.score));

  ChrfOptions chrf;
  chrf.word_order = choice & 128 ? 2 : 0;
  const double c = chrf_from_stats(ChrfSegmentScorer(chrf).stats(hyp, refs), chrf);
  if (!(c >= 0 && c <= 100.0000001)) fuzz::broken("chrF " + std::to_string(c));

  const double t = ter_from_stats(ter_segment_stats(hyp, refs));
  if (!(t >= 0 && std::isfinite(t))) fuzz::broken("TER " + std::to_string(t));
  if (ter_from_stats(ter_segment_stats(hyp, {hyp})) != 0) fuzz::broken("TER of a segment against itself is not 0");
  return 0;
}
