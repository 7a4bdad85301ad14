// A self-contained HTML page (inline CSS and SVG, no scripts, no external requests) for the cards that rldk writes:
// the doctor report card, the drift card, the determinism card. Commands build a page from a few block kinds;
// every piece of text is escaped here, so callers pass plain text, never markup.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rldk/chart.h"

namespace rldk {

class HtmlPage {
 public:
  // `title` is the <title> and the page's top heading; `subtitle` a muted line under it (e.g. the run path).
  explicit HtmlPage(std::string title, std::string subtitle = "");

  // A verdict banner at the top of the content: e.g. ("FAIL", "KL diverged at step 812", Critical).
  void verdict(std::string_view label, std::string_view text, ChartTone tone);
  // Section heading (level 2) and sub-heading (level 3).
  void heading(std::string_view text, int level = 2);
  void paragraph(std::string_view text);
  void muted(std::string_view text);  // small grey note
  void bullet_list(const std::vector<std::string>& items);
  // Key/value facts in a compact two-column grid (run id, steps, formats, ...).
  void facts(const std::vector<std::pair<std::string, std::string>>& items);
  // Score tiles: label, number shown as given (e.g. "0.82"), tone for the colour.
  struct Tile {
    std::string label;
    std::string value;
    std::string caption;
    ChartTone tone = ChartTone::Neutral;
  };
  void tiles(const std::vector<Tile>& items);
  // A table. `tones`, if not empty, has one entry per row and colours the row's first cell (severity column).
  void table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
             const std::vector<ChartTone>& tones = {});
  // A finding-style card: a coloured left border, a title line, a body paragraph and optional bullets.
  void callout(std::string_view title, std::string_view body, const std::vector<std::string>& bullets,
               ChartTone tone);
  void chart(const LineChart& chart);
  void graph(const GraphChart& graph);
  void bars(const BarChart& chart);
  // Preformatted text (commands, stderr excerpts).
  void code(std::string_view text);

  // The whole document, starting with <!DOCTYPE html>.
  std::string str() const;

 private:
  std::string title_;
  std::string subtitle_;
  std::string body_;
};

// Escapes &, <, >, " and ' for HTML text and attribute values.
std::string html_escape(std::string_view text);

// The CSS class suffix of a tone ("neutral", "info", "warning", "critical", "good").
const char* tone_name(ChartTone tone);

}  // namespace rldk
