// Line charts as self-contained SVG, for the HTML cards (doctor report card, drift card, determinism card).
// Output is deterministic (fixed float formatting, no ids from clocks or pointers), so cards can be golden-tested.
// Long series are reduced to at most `max_points_per_series` points per line by keeping, per horizontal pixel
// bucket, the first, min, max and last point: spikes survive the reduction, which plain striding would drop.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace rldk {

// How a shaded range or marker is drawn; also decides its colour.
enum class ChartTone { Neutral, Info, Warning, Critical, Good };

struct ChartSeries {
  std::string label;            // legend text; empty: no legend entry
  std::vector<double> steps;    // x values, ascending within a line; NaN/Inf steps are skipped
  std::vector<double> values;   // same length as steps; NaN/Inf values break the line (a gap) and get a tick mark
  bool dashed = false;
};

// A shaded vertical band, e.g. an anomaly episode from onset to end.
struct ChartRange {
  double start_step = 0;
  double end_step = 0;          // equal to start_step: a thin band one unit wide
  std::string label;            // shown as the band's tooltip (<title>)
  ChartTone tone = ChartTone::Warning;
};

// A vertical line at a step, e.g. a finding's onset or the first divergence.
struct ChartMarker {
  double step = 0;
  std::string label;            // printed at the top of the line
  ChartTone tone = ChartTone::Critical;
};

// A horizontal reference line, e.g. a rule threshold or a KL target.
struct ChartThreshold {
  double value = 0;
  std::string label;
  ChartTone tone = ChartTone::Neutral;
};

struct LineChart {
  std::string title;
  std::string x_label = "step";
  std::string y_label;
  std::vector<ChartSeries> series;
  std::vector<ChartRange> ranges;
  std::vector<ChartMarker> markers;
  std::vector<ChartThreshold> thresholds;
  bool log_y = false;           // values <= 0 are skipped on a log axis
  int width = 940;              // SVG user units (pixels at 100% zoom); fills an HtmlPage figure (main column)
  int height = 260;
  int max_points_per_series = 1200;
};

// The chart as an <svg> element (no XML prolog), safe to embed in HTML. Text is escaped. A chart with no finite
// point renders a framed "no data" box rather than failing.
std::string render_svg(const LineChart& chart);

// Horizontal bars, one row per label (per-layer change of a checkpoint diff). Bars scale to the largest finite
// value; a non-finite or negative value gets no bar, only its number. Labels are escaped and cut to fit.
struct Bar {
  std::string label;
  double value = 0.0;
  ChartTone tone = ChartTone::Info;
};
struct BarChart {
  std::string title;
  std::string value_label;  // what the numbers are, under the title
  std::vector<Bar> bars;
  int width = 940;
};
std::string render_svg(const BarChart& chart);

// A small directed graph drawn left to right in layers (a node sits one layer right of its furthest predecessor):
// data lineage (datasets and the transforms between them). Labels are escaped; a cycle is drawn, not followed.
struct GraphNode {
  std::string label;
  std::string caption;  // second, muted line (size, short hash)
  bool box = true;      // false: a rounded "process" node
  ChartTone tone = ChartTone::Neutral;
};
struct GraphChart {
  std::string title;
  std::vector<GraphNode> nodes;
  std::vector<std::pair<size_t, size_t>> edges;  // indices into nodes
};
std::string render_svg(const GraphChart& chart);

}  // namespace rldk
