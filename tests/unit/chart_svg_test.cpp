#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "rldk/chart.h"
#include "rldk/html_page.h"

namespace rldk {
namespace {

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + needle.size())) ++n;
  return n;
}

LineChart ramp(size_t n) {
  LineChart chart;
  chart.title = "policy/kl";
  ChartSeries s;
  s.label = "run A";
  for (size_t i = 0; i < n; ++i) {
    s.steps.push_back(static_cast<double>(i));
    s.values.push_back(0.01 * static_cast<double>(i));
  }
  chart.series.push_back(s);
  return chart;
}

TEST(ChartSvg, SameInputSameBytes) {
  LineChart chart = ramp(50);
  chart.ranges.push_back({10, 20, "kl_spike", ChartTone::Critical});
  chart.markers.push_back({10, "onset 10", ChartTone::Critical});
  EXPECT_EQ(render_svg(chart), render_svg(chart));
}

TEST(ChartSvg, EscapesText) {
  LineChart chart = ramp(3);
  chart.title = "<script>alert('x')</script>";
  chart.series[0].label = "a&b";
  std::string svg = render_svg(chart);
  EXPECT_EQ(svg.find("<script>"), std::string::npos);
  EXPECT_NE(svg.find("&lt;script&gt;"), std::string::npos);
  EXPECT_NE(svg.find("a&amp;b"), std::string::npos);
}

TEST(ChartSvg, NoFinitePointGivesNoDataBox) {
  LineChart chart;
  chart.title = "empty";
  chart.series.push_back({"nan only", {1, 2}, {std::nan(""), std::nan("")}, false});
  std::string svg = render_svg(chart);
  EXPECT_NE(svg.find("no data"), std::string::npos);
  EXPECT_EQ(svg.rfind("</svg>\n"), svg.size() - 7);
}

TEST(ChartSvg, NonFiniteValuesBreakTheLineAndGetAMark) {
  LineChart chart = ramp(10);
  chart.series[0].values[5] = std::numeric_limits<double>::infinity();
  std::string svg = render_svg(chart);
  EXPECT_EQ(count(svg, "non-finite value at step 5"), 1u);
  // Two pen-downs: the line restarts after the gap.
  size_t path = svg.find("<path d=\"M");
  ASSERT_NE(path, std::string::npos);
  std::string d = svg.substr(path, svg.find('"', path + 9) - path);
  EXPECT_EQ(count(d, "M"), 2u);
}

TEST(ChartSvg, ReductionKeepsASpike) {
  LineChart chart = ramp(100000);
  chart.series[0].values[54321] = 1e6;
  chart.max_points_per_series = 400;
  std::string svg = render_svg(chart);
  // The y axis must reach the spike (its tick labels go up to 1e6) and the path stays small.
  EXPECT_NE(svg.find(">1e+06<"), std::string::npos);
  EXPECT_LT(svg.size(), 40000u);
}

TEST(ChartSvg, LogAxisSkipsNonPositive) {
  LineChart chart;
  chart.log_y = true;
  chart.series.push_back({"grad", {0, 1, 2, 3}, {0.0, 1.0, 10.0, 1000.0}, false});
  std::string svg = render_svg(chart);
  EXPECT_NE(svg.find(">1000<"), std::string::npos);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
}

TEST(HtmlPage, IsSelfContainedAndEscaped) {
  HtmlPage page("rldk doctor", "runs/a & b");
  page.verdict("FAIL", "KL <diverged>", ChartTone::Critical);
  page.table({"severity", "finding"}, {{"critical", "kl_spike"}}, {ChartTone::Critical});
  page.chart(ramp(5));
  std::string html = page.str();
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("runs/a &amp; b"), std::string::npos);
  EXPECT_NE(html.find("KL &lt;diverged&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // no external resources
  EXPECT_NE(html.find("tone-critical"), std::string::npos);
}

}  // namespace
}  // namespace rldk
