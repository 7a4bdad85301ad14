// SVG line charts for the HTML cards. Everything is laid out here in user units; numbers are printed with fixed
// precision so the same data always gives the same bytes.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "rldk/chart.h"
#include "rldk/html_page.h"

namespace rldk {
namespace {

constexpr double MARGIN_LEFT = 64;
constexpr double MARGIN_RIGHT = 18;
constexpr double MARGIN_TOP = 34;
constexpr double MARGIN_BOTTOM = 40;
constexpr int TARGET_TICKS = 5;
constexpr double MARKER_LABEL_GAP = 140;  // user units; about the width of a short marker label
constexpr double MARKER_LABEL_ROW = 13;   // user units between stacked marker labels (11px text)
// Legend layout estimate per character of 12px sans-serif; generous, so that wide fonts (DejaVu Sans) do not run
// one entry's text into the next entry's line sample.
constexpr double LEGEND_CHAR_WIDTH = 7.2;
constexpr int MAX_BAD_VALUE_TICKS = 200;  // non-finite markers drawn per series; the rest are summarised in the legend
// Colour-blind-safe series palette (Okabe-Ito, without yellow, which is unreadable on white).
constexpr const char* PALETTE[] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#56b4e9", "#e69f00", "#000000"};

const char* tone_colour(ChartTone tone) {
  switch (tone) {
    case ChartTone::Info: return "#2563eb";
    case ChartTone::Warning: return "#d97706";
    case ChartTone::Critical: return "#dc2626";
    case ChartTone::Good: return "#16a34a";
    case ChartTone::Neutral: break;
  }
  return "#6b7280";
}

// Step labels: whole numbers, shortened with k/M so "150k" reads better than "1.5e+05".
std::string step_label(double v) {
  char buf[32];
  double a = std::fabs(v);
  if (a >= 1e6 && std::fmod(v, 1e5) == 0) {
    std::snprintf(buf, sizeof buf, "%gM", v / 1e6);
  } else if (a >= 1e4 && std::fmod(v, 1e3) == 0) {
    std::snprintf(buf, sizeof buf, "%gk", v / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  }
  return buf;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// Tick labels: short, and the same for the same value.
std::string tick_label(double v) {
  if (v == 0) return "0";
  double a = std::fabs(v);
  char buf[32];
  if (a >= 1e5 || a < 1e-3) {
    std::snprintf(buf, sizeof buf, "%.2g", v);
  } else if (a >= 100) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.4g", v);
  }
  return buf;
}

double nice_step(double span) {
  double raw = span / TARGET_TICKS;
  double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double residual = raw / magnitude;
  double nice = residual < 1.5 ? 1 : residual < 3 ? 2 : residual < 7 ? 5 : 10;
  return nice * magnitude;
}

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void add(double v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool empty() const { return !(lo <= hi); }
};

struct Frame {
  double left, top, width, height;
  Range x, y;
  bool log_y;
  bool integer_x;  // every x is a whole number (training steps): ticks too, labelled 150k rather than 1.5e+05
  double px(double step) const { return left + (step - x.lo) / (x.hi - x.lo) * width; }
  double py(double value) const {
    double v = log_y ? std::log10(value) : value;
    return top + height - (v - y.lo) / (y.hi - y.lo) * height;
  }
};

bool usable(double value, bool log_y) { return std::isfinite(value) && (!log_y || value > 0); }

// Pads a degenerate or tight range so lines do not sit on the frame.
void pad(Range& r, double fraction) {
  if (r.lo == r.hi) {
    double d = r.lo == 0 ? 1 : std::fabs(r.lo) * 0.1;
    r.lo -= d;
    r.hi += d;
    return;
  }
  double d = (r.hi - r.lo) * fraction;
  r.lo -= d;
  r.hi += d;
}

// Indices of the points to draw: all of them when few, otherwise first/min/max/last per pixel-column bucket.
std::vector<size_t> reduce(const ChartSeries& s, const Frame& f, int max_points) {
  size_t n = std::min(s.steps.size(), s.values.size());
  std::vector<size_t> keep;
  if (static_cast<int>(n) <= max_points) {
    keep.resize(n);
    for (size_t i = 0; i < n; ++i) keep[i] = i;
    return keep;
  }
  int buckets = std::max(1, max_points / 4);
  size_t i = 0;
  while (i < n) {
    if (!std::isfinite(s.steps[i])) {
      ++i;
      continue;
    }
    long bucket = std::lround((f.px(s.steps[i]) - f.left) / f.width * buckets);
    size_t first = i, lo = i, hi = i, last = i;
    for (; i < n; ++i) {
      if (!std::isfinite(s.steps[i])) continue;
      if (std::lround((f.px(s.steps[i]) - f.left) / f.width * buckets) != bucket) break;
      last = i;
      if (!std::isfinite(s.values[i])) {
        keep.push_back(i);  // a gap must survive the reduction, or a NaN stretch would be drawn as a line
        continue;
      }
      if (!std::isfinite(s.values[lo]) || s.values[i] < s.values[lo]) lo = i;
      if (!std::isfinite(s.values[hi]) || s.values[i] > s.values[hi]) hi = i;
    }
    keep.insert(keep.end(), {first, lo, hi, last});
  }
  std::sort(keep.begin(), keep.end());
  keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
  return keep;
}

void axes(std::string& out, const Frame& f, const LineChart& chart) {
  out += "<rect x=\"" + num(f.left) + "\" y=\"" + num(f.top) + "\" width=\"" + num(f.width) + "\" height=\"" +
         num(f.height) + "\" fill=\"#ffffff\" stroke=\"#d1d5db\"/>\n";
  // Y grid and labels.
  if (f.log_y) {
    for (double e = std::ceil(f.y.lo); e <= f.y.hi; e += 1) {
      double y = f.top + f.height - (e - f.y.lo) / (f.y.hi - f.y.lo) * f.height;
      out += "<line x1=\"" + num(f.left) + "\" x2=\"" + num(f.left + f.width) + "\" y1=\"" + num(y) + "\" y2=\"" +
             num(y) + "\" stroke=\"#eef0f3\"/>\n";
      out += "<text x=\"" + num(f.left - 6) + "\" y=\"" + num(y + 4) + "\" text-anchor=\"end\" class=\"tick\">" +
             html_escape(tick_label(std::pow(10.0, e))) + "</text>\n";
    }
  } else {
    double step = nice_step(f.y.hi - f.y.lo);
    for (double v = std::ceil(f.y.lo / step) * step; v <= f.y.hi + step * 1e-9; v += step) {
      double shown = std::fabs(v) < step * 1e-9 ? 0 : v;
      double y = f.py(shown);
      out += "<line x1=\"" + num(f.left) + "\" x2=\"" + num(f.left + f.width) + "\" y1=\"" + num(y) + "\" y2=\"" +
             num(y) + "\" stroke=\"#eef0f3\"/>\n";
      out += "<text x=\"" + num(f.left - 6) + "\" y=\"" + num(y + 4) + "\" text-anchor=\"end\" class=\"tick\">" +
             html_escape(tick_label(shown)) + "</text>\n";
    }
  }
  // X labels.
  double step = nice_step(f.x.hi - f.x.lo);
  if (f.integer_x && step < 1) step = 1;  // steps are integers; never label step 0.5
  for (double v = std::ceil(f.x.lo / step) * step; v <= f.x.hi + step * 1e-9; v += step) {
    double x = f.px(v);
    out += "<line x1=\"" + num(x) + "\" x2=\"" + num(x) + "\" y1=\"" + num(f.top + f.height) + "\" y2=\"" +
           num(f.top + f.height + 4) + "\" stroke=\"#9ca3af\"/>\n";
    out += "<text x=\"" + num(x) + "\" y=\"" + num(f.top + f.height + 17) + "\" text-anchor=\"middle\" class=\"tick\">" +
           html_escape(f.integer_x ? step_label(v) : tick_label(std::fabs(v) < step * 1e-9 ? 0 : v)) + "</text>\n";
  }
  if (!chart.x_label.empty()) {
    out += "<text x=\"" + num(f.left + f.width / 2) + "\" y=\"" + num(f.top + f.height + 34) +
           "\" text-anchor=\"middle\" class=\"axis\">" + html_escape(chart.x_label) + "</text>\n";
  }
  if (!chart.y_label.empty()) {
    double cy = f.top + f.height / 2;
    out += "<text transform=\"translate(14 " + num(cy) + ") rotate(-90)\" text-anchor=\"middle\" class=\"axis\">" +
           html_escape(chart.y_label) + "</text>\n";
  }
}

void draw_series(std::string& out, const ChartSeries& s, size_t index, const Frame& f, const LineChart& chart) {
  const char* colour = PALETTE[index % std::size(PALETTE)];
  std::vector<size_t> keep = reduce(s, f, chart.max_points_per_series);
  std::string path;
  bool pen_down = false;
  int bad_ticks = 0;
  std::string ticks;
  for (size_t i : keep) {
    double step = s.steps[i], value = s.values[i];
    if (!std::isfinite(step)) continue;
    if (!usable(value, chart.log_y)) {
      pen_down = false;
      if (!std::isfinite(value) && bad_ticks < MAX_BAD_VALUE_TICKS) {
        ++bad_ticks;
        double x = f.px(step);
        double y = f.top + f.height;
        ticks += "<path d=\"M" + num(x) + " " + num(y - 7) + "L" + num(x - 4) + " " + num(y) + "L" + num(x + 4) + " " +
                 num(y) + "Z\" fill=\"#dc2626\"><title>" + html_escape(s.label) + ": non-finite value at step " +
                 html_escape(step_label(step)) + "</title></path>\n";
      }
      continue;
    }
    path += (pen_down ? "L" : "M") + num(f.px(step)) + " " + num(f.py(value));
    pen_down = true;
  }
  if (!path.empty()) {
    out += "<path d=\"" + path + "\" fill=\"none\" stroke=\"" + colour + "\" stroke-width=\"1.5\"";
    if (s.dashed) out += " stroke-dasharray=\"5 3\"";
    out += " stroke-linejoin=\"round\"><title>" + html_escape(s.label) + "</title></path>\n";
  }
  out += ticks;
}

// The text line (0, 1, ...) of each marker's label at the top of the plot, -1 for none: markers close together get
// their labels on separate lines.
std::vector<int> marker_label_lines(const LineChart& chart, const Frame& f) {
  std::vector<int> lines;
  std::vector<double> label_xs;
  for (const ChartMarker& m : chart.markers) {
    if (!std::isfinite(m.step) || m.label.empty()) {
      lines.push_back(-1);
      continue;
    }
    double x = f.px(m.step);
    int line = 0;
    for (double other : label_xs) {
      if (std::fabs(other - x) < MARKER_LABEL_GAP) ++line;
    }
    lines.push_back(line);
    label_xs.push_back(x);
  }
  return lines;
}

void draw_legend(std::string& out, const LineChart& chart, const Frame& f) {
  double x = f.left + f.width;
  // Right-aligned: lay out from the last entry backwards with an estimated text width.
  std::string items;
  for (size_t i = chart.series.size(); i-- > 0;) {
    const ChartSeries& s = chart.series[i];
    if (s.label.empty()) continue;
    double w = LEGEND_CHAR_WIDTH * static_cast<double>(s.label.size()) + 26;
    x -= w;
    const char* colour = PALETTE[i % std::size(PALETTE)];
    items += "<line x1=\"" + num(x) + "\" x2=\"" + num(x + 16) + "\" y1=\"" + num(f.top - 10) + "\" y2=\"" +
             num(f.top - 10) + "\" stroke=\"" + colour + "\" stroke-width=\"2\"" +
             (s.dashed ? " stroke-dasharray=\"5 3\"" : "") + "/>\n";
    items += "<text x=\"" + num(x + 20) + "\" y=\"" + num(f.top - 6) + "\" class=\"legend\">" + html_escape(s.label) +
             "</text>\n";
  }
  out += items;
}

}  // namespace

std::string render_svg(const LineChart& chart) {
  Frame f{};
  f.left = MARGIN_LEFT;
  f.top = MARGIN_TOP;
  f.width = std::max(40.0, chart.width - MARGIN_LEFT - MARGIN_RIGHT);
  f.height = std::max(40.0, chart.height - MARGIN_TOP - MARGIN_BOTTOM);
  f.log_y = chart.log_y;
  f.integer_x = true;
  for (const ChartSeries& s : chart.series) {
    size_t n = std::min(s.steps.size(), s.values.size());
    for (size_t i = 0; i < n; ++i) {
      if (!std::isfinite(s.steps[i])) continue;
      f.x.add(s.steps[i]);
      f.integer_x = f.integer_x && s.steps[i] == std::floor(s.steps[i]);
      if (usable(s.values[i], chart.log_y)) f.y.add(chart.log_y ? std::log10(s.values[i]) : s.values[i]);
    }
  }

  std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " + std::to_string(chart.width) + " " +
                    std::to_string(chart.height) + "\" width=\"" + std::to_string(chart.width) + "\" height=\"" +
                    std::to_string(chart.height) + "\" role=\"img\" aria-label=\"" + html_escape(chart.title) +
                    "\" class=\"chart\">\n";
  out += "<style>.tick{font:11px sans-serif;fill:#4b5563}.axis{font:12px sans-serif;fill:#374151}"
         ".legend{font:12px sans-serif;fill:#111827}.title{font:600 13px sans-serif;fill:#111827}"
         ".mark{font:11px sans-serif;stroke:#ffffff;stroke-width:3px;stroke-linejoin:round;paint-order:stroke}"
         "</style>\n";  // marker and threshold labels keep a white halo where they cross a line
  out += "<text x=\"" + num(MARGIN_LEFT) + "\" y=\"16\" class=\"title\">" + html_escape(chart.title) + "</text>\n";
  if (f.y.empty() || f.x.empty()) {
    out += "<rect x=\"" + num(f.left) + "\" y=\"" + num(f.top) + "\" width=\"" + num(f.width) + "\" height=\"" +
           num(f.height) + "\" fill=\"#f9fafb\" stroke=\"#d1d5db\"/>\n";
    out += "<text x=\"" + num(f.left + f.width / 2) + "\" y=\"" + num(f.top + f.height / 2) +
           "\" text-anchor=\"middle\" class=\"axis\">no data</text>\n</svg>\n";
    return out;
  }
  for (const ChartRange& r : chart.ranges) {
    if (std::isfinite(r.start_step)) f.x.add(r.start_step);
    if (std::isfinite(r.end_step)) f.x.add(r.end_step);
  }
  for (const ChartMarker& m : chart.markers) {
    if (std::isfinite(m.step)) f.x.add(m.step);
  }
  for (const ChartThreshold& t : chart.thresholds) {
    if (usable(t.value, chart.log_y)) f.y.add(chart.log_y ? std::log10(t.value) : t.value);
  }
  if (f.x.lo == f.x.hi) pad(f.x, 0);
  pad(f.y, 0.06);
  // Marker labels get a band of their own at the top of the plot, so that they never sit on the data.
  std::vector<int> label_lines = marker_label_lines(chart, f);
  int label_rows = 0;
  for (int line : label_lines) label_rows = std::max(label_rows, line + 1);
  if (label_rows > 0) {
    double band = std::min(f.height / 2, MARKER_LABEL_ROW * label_rows + 4);
    f.y.hi += (f.y.hi - f.y.lo) * band / (f.height - band);
  }

  axes(out, f, chart);
  out += "<svg x=\"" + num(f.left) + "\" y=\"" + num(f.top) + "\" width=\"" + num(f.width) + "\" height=\"" +
         num(f.height) + "\" viewBox=\"" + num(f.left) + " " + num(f.top) + " " + num(f.width) + " " +
         num(f.height) + "\" overflow=\"hidden\">\n";  // clips lines to the plot area
  double unit = f.width / (f.x.hi - f.x.lo);
  for (const ChartRange& r : chart.ranges) {
    if (!std::isfinite(r.start_step) || !std::isfinite(r.end_step)) continue;
    double x0 = f.px(std::min(r.start_step, r.end_step));
    double w = std::max(std::fabs(r.end_step - r.start_step) * unit, std::max(unit, 2.0));
    out += "<rect x=\"" + num(x0) + "\" y=\"" + num(f.top) + "\" width=\"" + num(w) + "\" height=\"" + num(f.height) +
           "\" fill=\"" + tone_colour(r.tone) + "\" fill-opacity=\"0.14\"><title>" + html_escape(r.label) +
           "</title></rect>\n";
  }
  for (const ChartThreshold& t : chart.thresholds) {
    if (!usable(t.value, chart.log_y)) continue;
    double y = f.py(t.value);
    out += "<line x1=\"" + num(f.left) + "\" x2=\"" + num(f.left + f.width) + "\" y1=\"" + num(y) + "\" y2=\"" +
           num(y) + "\" stroke=\"" + tone_colour(t.tone) + "\" stroke-dasharray=\"2 3\"><title>" +
           html_escape(t.label) + "</title></line>\n";
  }
  for (size_t i = 0; i < chart.series.size(); ++i) draw_series(out, chart.series[i], i, f, chart);
  out += "</svg>\n";
  for (const ChartThreshold& t : chart.thresholds) {
    if (!usable(t.value, chart.log_y) || t.label.empty()) continue;
    out += "<text x=\"" + num(f.left + f.width - 4) + "\" y=\"" + num(f.py(t.value) - 4) +
           "\" text-anchor=\"end\" class=\"mark\" fill=\"" + tone_colour(t.tone) + "\">" + html_escape(t.label) +
           "</text>\n";
  }
  for (size_t i = 0; i < chart.markers.size(); ++i) {
    const ChartMarker& m = chart.markers[i];
    if (!std::isfinite(m.step)) continue;
    double x = f.px(m.step);
    int line = label_lines[i];
    out += "<line x1=\"" + num(x) + "\" x2=\"" + num(x) + "\" y1=\"" + num(f.top) + "\" y2=\"" +
           num(f.top + f.height) + "\" stroke=\"" + tone_colour(m.tone) + "\" stroke-width=\"1.5\" " +
           "stroke-dasharray=\"4 3\"><title>" + html_escape(m.label) + "</title></line>\n";
    if (line >= 0) {
      bool right_half = x > f.left + f.width * 0.7;
      out += "<text x=\"" + num(right_half ? x - 4 : x + 4) + "\" y=\"" + num(f.top + 12 + MARKER_LABEL_ROW * line) +
             "\" text-anchor=\"" + (right_half ? "end" : "start") + "\" class=\"mark\" fill=\"" + tone_colour(m.tone) +
             "\">" + html_escape(m.label) + "</text>\n";
    }
  }
  draw_legend(out, chart, f);
  out += "</svg>\n";
  return out;
}

}  // namespace rldk
