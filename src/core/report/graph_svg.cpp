// Layered drawing of a small directed graph (data lineage). Layer = longest path from a source, found by relaxing
// edges at most once per node, so a cycle in a hand-edited manifest ends the relaxation instead of looping.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "rldk/chart.h"
#include "rldk/html_page.h"
#include "svg_text.h"

namespace rldk {
namespace {

using svg::clip_label;
using svg::coord;

constexpr int NODE_W = 190;
constexpr int NODE_H = 46;
constexpr int GAP_X = 70;
constexpr int GAP_Y = 22;
constexpr int MARGIN = 16;
constexpr int TITLE_H = 26;
constexpr size_t LABEL_CHARS = 26;  // what fits in NODE_W at 12px; longer labels are cut with an ellipsis

const char* fill_of(ChartTone tone) {
  switch (tone) {
    case ChartTone::Critical: return "#fee2e2";
    case ChartTone::Warning: return "#fef3c7";
    case ChartTone::Good: return "#dcfce7";
    case ChartTone::Info: return "#dbeafe";
    case ChartTone::Neutral: break;
  }
  return "#f9fafb";
}

}  // namespace

std::string render_svg(const GraphChart& chart) {
  const size_t n = chart.nodes.size();
  std::vector<size_t> layer(n, 0);
  for (size_t pass = 0; pass < n; ++pass) {
    bool moved = false;
    for (auto [from, to] : chart.edges) {
      if (from >= n || to >= n) continue;
      if (layer[to] < layer[from] + 1 && layer[from] + 1 < n) {
        layer[to] = layer[from] + 1;
        moved = true;
      }
    }
    if (!moved) break;
  }
  size_t layers = n == 0 ? 1 : *std::max_element(layer.begin(), layer.end()) + 1;
  std::vector<size_t> row(n, 0), rows_in(layers, 0);
  for (size_t i = 0; i < n; ++i) row[i] = rows_in[layer[i]]++;
  size_t max_rows = std::max<size_t>(1, *std::max_element(rows_in.begin(), rows_in.end()));

  const int width = MARGIN * 2 + static_cast<int>(layers) * (NODE_W + GAP_X) - GAP_X;
  const int height = MARGIN * 2 + TITLE_H + static_cast<int>(max_rows) * (NODE_H + GAP_Y) - GAP_Y;
  auto x_of = [&](size_t i) { return MARGIN + static_cast<double>(layer[i]) * (NODE_W + GAP_X); };
  auto y_of = [&](size_t i) { return MARGIN + TITLE_H + static_cast<double>(row[i]) * (NODE_H + GAP_Y); };

  std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " + std::to_string(width) + " " +
                    std::to_string(height) + "\" width=\"" + std::to_string(width) + "\" height=\"" +
                    std::to_string(height) + "\" role=\"img\" aria-label=\"" + html_escape(chart.title) + "\">\n";
  out += "<style>.t{font:600 13px sans-serif;fill:#111827}.l{font:12px sans-serif;fill:#111827}"
         ".c{font:11px monospace;fill:#6b7280}</style>\n";
  out += "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" "
         "markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#6b7280\"/>"
         "</marker></defs>\n";
  out += "<text class=\"t\" x=\"" + std::to_string(MARGIN) + "\" y=\"" + std::to_string(MARGIN + 12) + "\">" +
         html_escape(chart.title) + "</text>\n";
  if (n == 0) {
    out += "<text class=\"c\" x=\"" + std::to_string(MARGIN) + "\" y=\"" + std::to_string(MARGIN + TITLE_H + 14) +
           "\">nothing recorded</text>\n</svg>\n";
    return out;
  }
  for (auto [from, to] : chart.edges) {
    if (from >= n || to >= n) continue;
    double x1 = x_of(from) + NODE_W, y1 = y_of(from) + NODE_H / 2.0;
    double x2 = x_of(to), y2 = y_of(to) + NODE_H / 2.0;
    if (layer[to] <= layer[from]) {  // a back edge (cycle): drawn below the nodes so it stays visible
      x1 = x_of(from) + NODE_W / 2.0;
      y1 = y_of(from) + NODE_H;
      x2 = x_of(to) + NODE_W / 2.0;
      y2 = y_of(to) + NODE_H;
    }
    double mid = (x1 + x2) / 2;
    out += "<path d=\"M" + coord(x1) + "," + coord(y1) + " C" + coord(mid) + "," + coord(y1) + " " + coord(mid) + "," +
           coord(y2) + " " + coord(x2) + "," + coord(y2) + "\" fill=\"none\" stroke=\"#9ca3af\" stroke-width=\"1.5\" "
           "marker-end=\"url(#arrow)\"/>\n";
  }
  for (size_t i = 0; i < n; ++i) {
    const GraphNode& node = chart.nodes[i];
    double x = x_of(i), y = y_of(i);
    out += "<g><title>" + html_escape(node.label) + (node.caption.empty() ? "" : "\n" + html_escape(node.caption)) +
           "</title><rect x=\"" + coord(x) + "\" y=\"" + coord(y) + "\" width=\"" + std::to_string(NODE_W) +
           "\" height=\"" + std::to_string(NODE_H) + "\" rx=\"" + (node.box ? "3" : "20") + "\" fill=\"" +
           fill_of(node.tone) + "\" stroke=\"#9ca3af\"/>";
    out += "<text class=\"l\" x=\"" + coord(x + 10) + "\" y=\"" + coord(y + 19) + "\">" +
           html_escape(clip_label(node.label, LABEL_CHARS)) + "</text>";
    if (!node.caption.empty()) {
      out += "<text class=\"c\" x=\"" + coord(x + 10) + "\" y=\"" + coord(y + 36) + "\">" +
             html_escape(clip_label(node.caption, LABEL_CHARS)) + "</text>";
    }
    out += "</g>\n";
  }
  out += "</svg>\n";
  return out;
}

}  // namespace rldk
