// Self-contained HTML pages for rldk's cards. One stylesheet, inline; no scripts and no external requests, so a card
// opens the same from a CI artifact, an e-mail attachment or a laptop without network.
#include "rldk/html_page.h"

#include "rldk/terminal_text.h"
#include "rldk/version.h"

namespace rldk {
namespace {

constexpr const char* STYLE = R"css(
:root{--fg:#111827;--muted:#6b7280;--line:#e5e7eb;--bg:#f9fafb;--info:#2563eb;--warning:#d97706;
--critical:#dc2626;--good:#16a34a;--neutral:#6b7280}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.5 -apple-system,"Segoe UI",Roboto,"Helvetica Neue",
Arial,sans-serif}
header{background:#fff;border-bottom:1px solid var(--line);padding:20px 32px}
header h1{margin:0;font-size:22px}
header .subtitle{color:var(--muted);margin-top:2px;word-break:break-all}
main{max-width:1040px;margin:0 auto;padding:16px 32px 40px}
h2{font-size:18px;margin:28px 0 10px;padding-bottom:4px;border-bottom:1px solid var(--line)}
h3{font-size:15px;margin:18px 0 8px}
p{margin:8px 0}
.muted{color:var(--muted);font-size:12px}
.verdict{display:flex;gap:14px;align-items:center;background:#fff;border:1px solid var(--line);
border-left:6px solid var(--tone);border-radius:6px;padding:12px 16px;margin:8px 0 16px}
.verdict .label{font-weight:700;font-size:18px;color:var(--tone);white-space:nowrap}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;background:#fff;border:1px solid var(--line);
border-radius:6px;padding:10px 14px}
.facts dt{color:var(--muted)}
.facts dd{margin:0;word-break:break-all}
.tiles{display:flex;flex-wrap:wrap;gap:10px}
.tile{background:#fff;border:1px solid var(--line);border-top:4px solid var(--tone);border-radius:6px;
padding:8px 12px;min-width:120px}
.tile .value{font-size:22px;font-weight:700;color:var(--tone)}
.tile .label{font-weight:600}
.tile .caption{color:var(--muted);font-size:12px}
table{border-collapse:collapse;width:100%;background:#fff;border:1px solid var(--line);border-radius:6px}
th,td{text-align:left;padding:6px 10px;border-bottom:1px solid var(--line);vertical-align:top}
th{background:#f3f4f6;font-weight:600}
td.toned{font-weight:600;color:var(--tone)}
.callout{background:#fff;border:1px solid var(--line);border-left:5px solid var(--tone);border-radius:6px;
padding:10px 14px;margin:10px 0}
.callout .title{font-weight:700}
.callout ul{margin:6px 0 0 18px;padding:0}
figure{margin:12px 0;background:#fff;border:1px solid var(--line);border-radius:6px;padding:8px;overflow-x:auto}
figure svg{max-width:100%;height:auto;display:block}
pre{background:#111827;color:#e5e7eb;padding:10px 12px;border-radius:6px;overflow-x:auto;font-size:12px;white-space:pre-wrap;overflow-wrap:anywhere}
footer{color:var(--muted);font-size:12px;text-align:center;padding:16px}
.tone-info{--tone:var(--info)}.tone-warning{--tone:var(--warning)}.tone-critical{--tone:var(--critical)}
.tone-good{--tone:var(--good)}.tone-neutral{--tone:var(--neutral)}
)css";

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  // Control characters and invalid UTF-8 shown as \x1b first: a page is also read with cat and less.
  for (char c : terminal_safe(text)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

const char* tone_name(ChartTone tone) {
  switch (tone) {
    case ChartTone::Info: return "info";
    case ChartTone::Warning: return "warning";
    case ChartTone::Critical: return "critical";
    case ChartTone::Good: return "good";
    case ChartTone::Neutral: break;
  }
  return "neutral";
}

HtmlPage::HtmlPage(std::string title, std::string subtitle)
    : title_(std::move(title)), subtitle_(std::move(subtitle)) {}

void HtmlPage::verdict(std::string_view label, std::string_view text, ChartTone tone) {
  body_ += "<div class=\"verdict tone-" + std::string(tone_name(tone)) + "\"><span class=\"label\">" +
           html_escape(label) + "</span><span>" + html_escape(text) + "</span></div>\n";
}

void HtmlPage::heading(std::string_view text, int level) {
  std::string tag = level <= 2 ? "h2" : "h3";
  body_ += "<" + tag + ">" + html_escape(text) + "</" + tag + ">\n";
}

void HtmlPage::paragraph(std::string_view text) { body_ += "<p>" + html_escape(text) + "</p>\n"; }

void HtmlPage::muted(std::string_view text) { body_ += "<p class=\"muted\">" + html_escape(text) + "</p>\n"; }

void HtmlPage::bullet_list(const std::vector<std::string>& items) {
  if (items.empty()) return;
  body_ += "<ul>\n";
  for (const std::string& item : items) body_ += "<li>" + html_escape(item) + "</li>\n";
  body_ += "</ul>\n";
}

void HtmlPage::facts(const std::vector<std::pair<std::string, std::string>>& items) {
  if (items.empty()) return;
  body_ += "<dl class=\"facts\">\n";
  for (const auto& [key, value] : items) {
    body_ += "<dt>" + html_escape(key) + "</dt><dd>" + html_escape(value) + "</dd>\n";
  }
  body_ += "</dl>\n";
}

void HtmlPage::tiles(const std::vector<Tile>& items) {
  if (items.empty()) return;
  body_ += "<div class=\"tiles\">\n";
  for (const Tile& t : items) {
    body_ += "<div class=\"tile tone-" + std::string(tone_name(t.tone)) + "\"><div class=\"label\">" +
             html_escape(t.label) + "</div><div class=\"value\">" + html_escape(t.value) + "</div>";
    if (!t.caption.empty()) body_ += "<div class=\"caption\">" + html_escape(t.caption) + "</div>";
    body_ += "</div>\n";
  }
  body_ += "</div>\n";
}

void HtmlPage::table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                     const std::vector<ChartTone>& tones) {
  body_ += "<table>\n";
  if (!header.empty()) {
    body_ += "<thead><tr>";
    for (const std::string& h : header) body_ += "<th>" + html_escape(h) + "</th>";
    body_ += "</tr></thead>\n";
  }
  body_ += "<tbody>\n";
  for (size_t r = 0; r < rows.size(); ++r) {
    body_ += "<tr>";
    for (size_t c = 0; c < rows[r].size(); ++c) {
      if (c == 0 && r < tones.size()) {
        body_ += "<td class=\"toned tone-" + std::string(tone_name(tones[r])) + "\">" + html_escape(rows[r][c]) +
                 "</td>";
      } else {
        body_ += "<td>" + html_escape(rows[r][c]) + "</td>";
      }
    }
    body_ += "</tr>\n";
  }
  body_ += "</tbody></table>\n";
}

void HtmlPage::callout(std::string_view title, std::string_view body, const std::vector<std::string>& bullets,
                       ChartTone tone) {
  body_ += "<div class=\"callout tone-" + std::string(tone_name(tone)) + "\"><div class=\"title\">" +
           html_escape(title) + "</div>";
  if (!body.empty()) body_ += "<p>" + html_escape(body) + "</p>";
  if (!bullets.empty()) {
    body_ += "<ul>";
    for (const std::string& b : bullets) body_ += "<li>" + html_escape(b) + "</li>";
    body_ += "</ul>";
  }
  body_ += "</div>\n";
}

void HtmlPage::chart(const LineChart& chart) { body_ += "<figure>\n" + render_svg(chart) + "</figure>\n"; }

void HtmlPage::bars(const BarChart& chart) { body_ += "<figure>\n" + render_svg(chart) + "</figure>\n"; }

void HtmlPage::graph(const GraphChart& graph) { body_ += "<figure>\n" + render_svg(graph) + "</figure>\n"; }

void HtmlPage::code(std::string_view text) { body_ += "<pre>" + html_escape(text) + "</pre>\n"; }

std::string HtmlPage::str() const {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
                    html_escape(title_) + "</title>\n<style>" + STYLE + "</style>\n</head>\n<body>\n<header><h1>" +
                    html_escape(title_) + "</h1>";
  if (!subtitle_.empty()) out += "<div class=\"subtitle\">" + html_escape(subtitle_) + "</div>";
  out += "</header>\n<main>\n" + body_ + "</main>\n<footer>rldk " + std::string(VERSION) + "</footer>\n</body>\n</html>\n";
  return out;
}

}  // namespace rldk
