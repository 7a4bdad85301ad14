// Horizontal bar chart: one row per label, bars scaled to the largest finite value, the number at the bar's end.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "rldk/chart.h"
#include "rldk/html_page.h"
#include "svg_text.h"

namespace rldk {
namespace {

using svg::clip_label;
using svg::coord;

constexpr int ROW_H = 20;
constexpr int BAR_H = 13;
constexpr int LABEL_W = 230;
constexpr int VALUE_W = 90;
constexpr int MARGIN = 12;
constexpr int TITLE_H = 40;
constexpr size_t LABEL_CHARS = 34;  // what fits in LABEL_W at 12px

std::string value_text(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

const char* colour_of(ChartTone tone) {
  switch (tone) {
    case ChartTone::Critical: return "#dc2626";
    case ChartTone::Warning: return "#d97706";
    case ChartTone::Good: return "#16a34a";
    case ChartTone::Neutral: return "#6b7280";
    case ChartTone::Info: break;
  }
  return "#2563eb";
}

}  // namespace

std::string render_svg(const BarChart& chart) {
  double largest = 0;
  for (const auto& b : chart.bars) {
    if (std::isfinite(b.value)) largest = std::max(largest, b.value);
  }
  const int rows = std::max<int>(1, static_cast<int>(chart.bars.size()));
  const int height = MARGIN * 2 + TITLE_H + rows * ROW_H;
  const double bar_w = std::max(40, chart.width - 2 * MARGIN - LABEL_W - VALUE_W);
  std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " + std::to_string(chart.width) + " " +
                    std::to_string(height) + "\" width=\"" + std::to_string(chart.width) + "\" height=\"" +
                    std::to_string(height) + "\" role=\"img\" aria-label=\"" + html_escape(chart.title) + "\">\n";
  out += "<style>.t{font:600 13px sans-serif;fill:#111827}.l{font:12px sans-serif;fill:#111827}"
         ".v{font:11px sans-serif;fill:#4b5563}</style>\n";
  out += "<text class=\"t\" x=\"" + std::to_string(MARGIN) + "\" y=\"" + std::to_string(MARGIN + 12) + "\">" +
         html_escape(chart.title) + "</text>\n";
  if (!chart.value_label.empty()) {
    out += "<text class=\"v\" x=\"" + std::to_string(MARGIN) + "\" y=\"" + std::to_string(MARGIN + 28) + "\">" +
           html_escape(chart.value_label) + "</text>\n";
  }
  if (chart.bars.empty()) {
    out += "<text class=\"v\" x=\"" + std::to_string(MARGIN) + "\" y=\"" + std::to_string(MARGIN + TITLE_H + 14) +
           "\">no data</text>\n</svg>\n";
    return out;
  }
  const double x0 = MARGIN + LABEL_W;
  for (size_t i = 0; i < chart.bars.size(); ++i) {
    const Bar& b = chart.bars[i];
    const double y = MARGIN + TITLE_H + static_cast<double>(i) * ROW_H;
    double w = 0;
    if (std::isfinite(b.value) && b.value > 0 && largest > 0) w = std::max(1.0, b.value / largest * bar_w);
    out += "<g><title>" + html_escape(b.label) + ": " + value_text(b.value) + "</title>";
    out += "<text class=\"l\" x=\"" + coord(x0 - 8) + "\" y=\"" + coord(y + 11) + "\" text-anchor=\"end\">" +
           html_escape(clip_label(b.label, LABEL_CHARS)) + "</text>";
    out += "<rect x=\"" + coord(x0) + "\" y=\"" + coord(y + 1) + "\" width=\"" + coord(w) + "\" height=\"" +
           std::to_string(BAR_H) + "\" fill=\"" + colour_of(b.tone) + "\"/>";
    out += "<text class=\"v\" x=\"" + coord(x0 + w + 6) + "\" y=\"" + coord(y + 11) + "\">" + value_text(b.value) +
           "</text></g>\n";
  }
  out += "</svg>\n";
  return out;
}

}  // namespace rldk
