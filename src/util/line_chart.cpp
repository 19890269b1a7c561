#include "util/line_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "util/svg.hpp"

namespace heed {
namespace {

constexpr int kPanelWidth = 460, kPanelHeight = 300;
constexpr int kLeft = 64, kRight = 18, kTop = 34, kBottom = 46;  // plot area inside a panel
constexpr int kLegendRow = 22;
// Colour-blind-safe colours (Okabe and Ito), in the order runs are named.
constexpr const char* kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"};
constexpr int kPaletteSize = sizeof kPalette / sizeof kPalette[0];

const char* colour_of(int index) { return kPalette[((index % kPaletteSize) + kPaletteSize) % kPaletteSize]; }

std::string number(double v) {  // a tick label: no trailing zeros, no "-0"
  if (std::abs(v) < 1e-12) v = 0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string panel_svg(const ChartPanel& panel, int x0, int y0) {
  char buf[256];
  std::string doc;
  const int plot_w = kPanelWidth - kLeft - kRight, plot_h = kPanelHeight - kTop - kBottom;
  const int px = x0 + kLeft, py = y0 + kTop;
  std::snprintf(buf, sizeof buf, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-weight=\"bold\">",
                px + plot_w / 2, y0 + 20);
  doc += buf + svg::escape(panel.title) + "</text>\n";
  std::snprintf(buf, sizeof buf, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", px + plot_w / 2,
                y0 + kPanelHeight - 8);
  doc += buf + svg::escape(panel.x_label) + "</text>\n";

  double x_low = 0, x_high = -std::numeric_limits<double>::infinity();
  double y_low = std::numeric_limits<double>::infinity(), y_high = -y_low;
  for (const ChartLine& line : panel.lines)
    for (const auto& [x, y] : line.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      x_low = std::min(x_low, x);
      x_high = std::max(x_high, x);
      y_low = std::min(y_low, y);
      y_high = std::max(y_high, y);
    }
  std::snprintf(buf, sizeof buf, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#888888\"/>\n",
                px, py, plot_w, plot_h);
  doc += buf;
  if (!std::isfinite(x_high) || !std::isfinite(y_low)) {
    std::snprintf(buf, sizeof buf, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#888888\">no data</text>\n",
                  px + plot_w / 2, py + plot_h / 2);
    return doc + buf;
  }
  if (panel.y_from_zero) y_low = std::min(0.0, y_low);
  const std::vector<double> xs = axis_ticks(x_low, x_high, 5), ys = axis_ticks(y_low, y_high, 5);
  const double xa = xs.front(), xb = xs.back(), ya = ys.front(), yb = ys.back();
  // In halves, as axis_ticks: a difference of ±1e308 would overflow.
  auto to_x = [&](double x) { return px + (x / 2 - xa / 2) / (xb / 2 - xa / 2) * plot_w; };
  auto to_y = [&](double y) { return py + plot_h - (y / 2 - ya / 2) / (yb / 2 - ya / 2) * plot_h; };
  for (double t : xs) {
    std::snprintf(buf, sizeof buf,
                  "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#eeeeee\"/>"
                  "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" font-size=\"11\">",
                  to_x(t), py, to_x(t), py + plot_h, to_x(t), py + plot_h + 15);
    doc += buf + number(t) + "</text>\n";
  }
  for (double t : ys) {
    std::snprintf(buf, sizeof buf,
                  "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eeeeee\"/>"
                  "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\">",
                  px, to_y(t), px + plot_w, to_y(t), px - 6, to_y(t) + 4);
    doc += buf + number(t) + "</text>\n";
  }
  for (const ChartLine& line : panel.lines) {
    std::string points;
    for (const auto& [x, y] : line.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      std::snprintf(buf, sizeof buf, "%.1f,%.1f ", to_x(x), to_y(y));
      points += buf;
    }
    if (points.empty()) continue;
    points.pop_back();
    std::snprintf(buf, sizeof buf, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\"%s points=\"",
                  colour_of(line.colour), line.dashed ? " stroke-dasharray=\"6 4\"" : "");
    doc += buf + points + "\"/>\n";
    if (line.points.size() == 1) {  // a single point shows as a dot
      std::snprintf(buf, sizeof buf, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n",
                    to_x(line.points[0].first), to_y(line.points[0].second), colour_of(line.colour));
      doc += buf;
    }
  }
  return doc;
}

}  // namespace

std::vector<double> axis_ticks(double low, double high, int count) {
  constexpr double kLargest = std::numeric_limits<double>::max();
  count = std::max(1, count);
  if (!(high > low)) {  // one value: a unit range around it
    const double pad = std::max(1.0, std::abs(low) * 0.1);
    low = std::max(-kLargest, low - pad);
    high = std::min(kLargest, high + pad);
  }
  // In halves: the range of ±1e308 would overflow.
  const double raw = (high / 2 - low / 2) / count * 2;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * magnitude >= raw) {
      step = m * magnitude;
      break;
    }
  std::vector<double> ticks;
  const double first = std::floor(low / step) * step;
  // Bounded: at 1e17 a step of 5 does not change a double, and ticks near ±1e308 overflow.
  for (int i = 0; i <= 2 * count + 2; ++i) {
    const double t = first + step * i;
    if (!std::isfinite(t) || (!ticks.empty() && t <= ticks.back())) break;
    ticks.push_back(t);
    if (t >= high - 1e-9 * step) return ticks;
  }
  return {low, high};  // numbers too close or too large for round steps: the range's ends
}

std::string line_charts_svg(const std::vector<ChartPanel>& panels, int columns, const std::vector<LegendEntry>& legend) {
  columns = std::max(1, std::min(columns, static_cast<int>(std::max<size_t>(1, panels.size()))));
  const int rows = static_cast<int>((panels.size() + columns - 1) / columns);
  const int width = columns * kPanelWidth;
  const int height = rows * kPanelHeight + 12 + kLegendRow * static_cast<int>(legend.size());
  std::string doc = svg::open_document(width, height, 13);
  for (size_t i = 0; i < panels.size(); ++i)
    doc += panel_svg(panels[i], static_cast<int>(i % columns) * kPanelWidth, static_cast<int>(i / columns) * kPanelHeight);
  char buf[256];
  for (size_t i = 0; i < legend.size(); ++i) {
    const int y = rows * kPanelHeight + 12 + kLegendRow * static_cast<int>(i);
    if (legend[i].colour >= 0) {
      std::snprintf(buf, sizeof buf,
                    "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"3\"/>"
                    "<text x=\"%d\" y=\"%d\">",
                    kLeft, y + 6, kLeft + 28, y + 6, colour_of(legend[i].colour), kLeft + 36, y + 10);
    } else {
      std::snprintf(buf, sizeof buf, "<text x=\"%d\" y=\"%d\" fill=\"#555555\">", kLeft, y + 10);
    }
    doc += buf + svg::escape(legend[i].text) + "</text>\n";
  }
  return doc + "</svg>\n";
}

}  // namespace heed
