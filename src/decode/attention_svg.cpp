#include "decode/attention_svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "decode/alignment.hpp"
#include "util/svg.hpp"

namespace heed {
namespace {

constexpr int kCell = 22;      // px per matrix cell
constexpr int kCharWidth = 8;  // px per label character (an estimate for the 13px font)
constexpr int kMargin = 8;

int longest(const std::vector<std::string>& labels) {
  int n = 0;
  for (const auto& l : labels) n = std::max(n, svg::characters(l));
  return n;
}

}  // namespace

AttentionMap word_attention(const Tokenizer& source, const std::vector<int32_t>& source_ids, const Tokenizer& target,
                            const std::vector<int32_t>& target_ids, const std::vector<std::vector<float>>& attention) {
  AttentionMap map;
  map.source_labels = word_texts(source, source_ids);
  map.target_labels = word_texts(target, target_ids);
  const int source_words = static_cast<int>(map.source_labels.size());
  const int target_words = static_cast<int>(map.target_labels.size());
  map.source_labels.push_back("</s>");
  map.target_labels.push_back("</s>");

  std::vector<int> column = piece_words(source, source_ids);
  column.push_back(source_words);  // </s>
  std::vector<int> row = piece_words(target, target_ids);
  row.push_back(target_words);  // </s>

  map.weights.assign(map.target_labels.size(), std::vector<float>(map.source_labels.size(), 0.f));
  std::vector<int> pieces_in_row(map.target_labels.size(), 0);
  for (size_t t = 0; t < row.size() && t < attention.size(); ++t) {
    if (row[t] < 0) continue;
    ++pieces_in_row[row[t]];
    for (size_t s = 0; s < column.size() && s < attention[t].size(); ++s)
      if (column[s] >= 0) map.weights[row[t]][column[s]] += attention[t][s];
  }
  for (size_t r = 0; r < map.weights.size(); ++r)
    if (pieces_in_row[r] > 1)
      for (float& w : map.weights[r]) w /= static_cast<float>(pieces_in_row[r]);
  return map;
}

AttentionMap memory_attention(const Tokenizer& target, const std::vector<int32_t>& target_ids,
                              const std::vector<std::vector<float>>& attention, int memory_rows) {
  AttentionMap map;
  for (int i = 0; i < memory_rows; ++i) map.source_labels.push_back(std::to_string(i));
  map.target_labels = word_texts(target, target_ids);
  const int target_words = static_cast<int>(map.target_labels.size());
  map.target_labels.push_back("</s>");
  std::vector<int> row = piece_words(target, target_ids);
  row.push_back(target_words);  // </s>
  map.weights.assign(map.target_labels.size(), std::vector<float>(memory_rows, 0.f));
  std::vector<int> pieces_in_row(map.target_labels.size(), 0);
  for (size_t t = 0; t < row.size() && t < attention.size(); ++t) {
    if (row[t] < 0) continue;
    ++pieces_in_row[row[t]];
    for (int i = 0; i < memory_rows && i < static_cast<int>(attention[t].size()); ++i)
      map.weights[row[t]][i] += attention[t][i];
  }
  for (size_t r = 0; r < map.weights.size(); ++r)
    if (pieces_in_row[r] > 1)
      for (float& w : map.weights[r]) w /= static_cast<float>(pieces_in_row[r]);
  return map;
}

std::string attention_svg(const AttentionMap& map) {
  const int columns = static_cast<int>(map.source_labels.size());
  const int rows = static_cast<int>(map.target_labels.size());
  const int left = kMargin + kCharWidth * longest(map.target_labels) + kMargin;
  const int top = kMargin + kCharWidth * longest(map.source_labels) + kMargin;
  const int width = left + columns * kCell + kMargin, height = top + rows * kCell + kMargin;

  std::string doc = svg::open_document(width, height, 13);
  char buf[512];
  for (int s = 0; s < columns; ++s) {  // source words across the top, read bottom-up
    const int x = left + s * kCell + kCell / 2 + 4, y = top - kMargin;
    std::snprintf(buf, sizeof buf, "<text transform=\"translate(%d,%d) rotate(-90)\">", x, y);
    doc += buf + svg::escape(map.source_labels[s]) + "</text>\n";
  }
  for (int t = 0; t < rows; ++t) {
    const int x = left - kMargin, y = top + t * kCell + kCell / 2 + 4;
    std::snprintf(buf, sizeof buf, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", x, y);
    doc += buf + svg::escape(map.target_labels[t]) + "</text>\n";
    for (int s = 0; s < columns; ++s) {
      const float w = std::isfinite(map.weights[t][s]) ? std::clamp(map.weights[t][s], 0.f, 1.f) : 0.f;  // nan: blank
      std::snprintf(buf, sizeof buf,
                    "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#08306b\" fill-opacity=\"%.3f\" "
                    "stroke=\"#dddddd\" stroke-width=\"0.5\"><title>",
                    left + s * kCell, top + t * kCell, kCell, kCell, w);
      doc += buf + svg::escape(map.target_labels[t]) + " \xE2\x86\x92 " + svg::escape(map.source_labels[s]);
      std::snprintf(buf, sizeof buf, ": %.3f</title></rect>\n", map.weights[t][s]);
      doc += buf;
    }
  }
  doc += "</svg>\n";
  return doc;
}

}  // namespace heed
