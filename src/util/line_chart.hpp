#pragma once
// Line charts as SVG: panels in a grid, each with its axes (ticks at 1, 2 or 5 × 10^k), title and
// lines, and one legend below them all. Used for learning curves (train/learning_curves).
#include <string>
#include <utility>
#include <vector>

namespace heed {

struct ChartLine {
  std::vector<std::pair<double, double>> points;  // (x, y) in drawing order
  int colour = 0;                                 // an index into the palette
  bool dashed = false;
};

struct ChartPanel {
  std::string title, x_label;
  std::vector<ChartLine> lines;
  bool y_from_zero = false;  // else the y axis starts near the smallest value
};

// A legend entry: a name drawn in a palette colour, or (colour < 0) a note in grey.
struct LegendEntry {
  std::string text;
  int colour = -1;
};

// Panels `columns` to a row. A panel without points says "no data".
std::string line_charts_svg(const std::vector<ChartPanel>& panels, int columns, const std::vector<LegendEntry>& legend);

// "Nice" tick values covering [low, high]: about `count` steps of 1, 2 or 5 × 10^k.
std::vector<double> axis_ticks(double low, double high, int count);

}  // namespace heed
