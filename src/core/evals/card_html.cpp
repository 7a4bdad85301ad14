// The eval card as a self-contained HTML page: verdict, an interval plot of every task's improvement, the
// probability of improvement, performance profiles with their bands, and the tables of the Markdown card.
#include "evals/format.h"
#include "rldk/evals.h"
#include "rldk/html_page.h"

namespace rldk::evals {

std::string evals_html(const EvalsReport& r) {
  const EvalsOptions& o = r.options;
  HtmlPage page("rldk eval card", r.a.empty() ? r.summary : r.b + " vs " + r.a);
  if (!r.a.empty()) {
    ChartTone tone = r.gate_failed || r.verdict == "worse" ? ChartTone::Critical
                     : r.verdict == "better"                ? ChartTone::Good
                     : r.verdict == "mixed"                 ? ChartTone::Warning
                                                            : ChartTone::Neutral;
    page.verdict(r.verdict, r.summary, tone);
  }
  for (const auto& w : r.warnings) page.callout("warning", w, {}, ChartTone::Warning);
  if (!r.tasks.empty()) {
    page.heading("Improvement of B over A per task");
    // Interval plot: tasks along x, the estimate and both interval ends as lines; 0 and -margin as thresholds.
    LineChart chart;
    chart.title = "B - A in each task's direction, " + fmt_percent(o.bootstrap.confidence) + " intervals";
    chart.x_label = "task (in table order, from 1)";
    chart.y_label = "improvement";
    ChartSeries est{"estimate", {}, {}, false}, lo{"interval low", {}, {}, true}, hi{"interval high", {}, {}, true};
    for (size_t i = 0; i < r.tasks.size(); ++i) {
      double x = static_cast<double>(i + 1);
      est.steps.push_back(x);
      est.values.push_back(r.tasks[i].improvement);
      lo.steps.push_back(x);
      lo.values.push_back(r.tasks[i].ci_low);
      hi.steps.push_back(x);
      hi.values.push_back(r.tasks[i].ci_high);
    }
    chart.series = {est, lo, hi};
    chart.thresholds.push_back(ChartThreshold{0, "no difference"});
    if (o.margin > 0) chart.thresholds.push_back(ChartThreshold{-o.margin, "gate margin"});
    page.chart(chart);
    std::vector<std::vector<std::string>> rows;
    std::vector<ChartTone> tones;
    for (size_t i = 0; i < r.tasks.size(); ++i) {
      const auto& t = r.tasks[i];
      rows.push_back({std::to_string(i + 1) + ". " + t.task, t.direction == Direction::lower ? "lower" : "higher",
                      t.design, fmt_number(t.mean_a), fmt_number(t.mean_b), fmt_number(t.improvement),
                      "[" + fmt_number(t.ci_low) + ", " + fmt_number(t.ci_high) + "]",
                      std::isnan(t.p_holm) ? "n/a" : fmt_number(t.p_holm, 3), t.verdict});
      tones.push_back(t.verdict == "worse"    ? ChartTone::Critical
                      : t.verdict == "better" ? ChartTone::Good
                                              : ChartTone::Neutral);
    }
    page.table({"task", "better", "design", "A", "B", "improvement", "interval", "p (Holm)", "verdict"}, rows, tones);
    for (const auto& t : r.tasks) {
      if (!t.warnings.empty()) page.callout(t.task, t.interval, t.warnings, ChartTone::Warning);
    }
  }
  for (const auto& s : r.summaries) {
    std::string dir = s.direction == Direction::lower ? "lower" : "higher";
    page.heading("Aggregates over " + std::to_string(s.tasks.size()) + " " + dir + "-is-better tasks");
    std::vector<HtmlPage::Tile> tiles;
    if (!r.a.empty()) {
      const Interval& p = s.probability_of_improvement;
      tiles.push_back({"P(B better than A)", fmt_number(p.estimate, 3),
                       "[" + fmt_number(p.low, 3) + ", " + fmt_number(p.high, 3) + "]",
                       p.low > 0.5 ? ChartTone::Good : p.high < 0.5 ? ChartTone::Critical : ChartTone::Neutral});
    }
    for (const auto& a : s.arms) {
      tiles.push_back({"IQM " + a.arm, fmt_number(a.iqm.estimate, 3),
                       "[" + fmt_number(a.iqm.low, 3) + ", " + fmt_number(a.iqm.high, 3) + "]", ChartTone::Info});
    }
    page.tiles(tiles);
    std::vector<std::vector<std::string>> rows;
    auto cell = [](const Interval& i) {
      if (std::isnan(i.estimate)) return std::string("n/a");
      return fmt_number(i.estimate) + " [" + fmt_number(i.low) + ", " + fmt_number(i.high) + "]";
    };
    for (const auto& a : s.arms) {
      std::string runs = std::to_string(a.runs_min);
      if (a.runs_max != a.runs_min) runs += "-" + std::to_string(a.runs_max);
      rows.push_back({a.arm, runs, cell(a.mean), cell(a.median), cell(a.iqm), cell(a.optimality_gap)});
    }
    page.table({"arm", "runs/task", "mean", "median", "IQM", "optimality gap"}, rows);
    LineChart profile;
    profile.title = "Performance profile: fraction of runs scoring above tau (dashed: " +
                    fmt_percent(o.bootstrap.confidence) + " bands)";
    profile.x_label = "tau";
    profile.y_label = "fraction of runs > tau";
    for (const auto& a : s.arms) {
      profile.series.push_back(ChartSeries{a.arm, a.profile.tau, a.profile.fraction, false});
      // The chart picks a colour per series, so the bands are named in the legend rather than left unlabeled.
      profile.series.push_back(ChartSeries{a.arm + " band low", a.profile.tau, a.profile.low, true});
      profile.series.push_back(ChartSeries{a.arm + " band high", a.profile.tau, a.profile.high, true});
    }
    page.chart(profile);
    for (const auto& n : s.notes) page.muted(n);
  }
  if (!r.a.empty()) {
    page.heading("Gate");
    if (r.gate_failed) {
      page.callout("B is worse than A beyond the margin " + fmt_number(o.margin), "", r.gate_reasons,
                   ChartTone::Critical);
    } else {
      page.paragraph("No task shows B worse than A by more than " + fmt_number(o.margin) + " at " +
                     fmt_percent(o.bootstrap.confidence) + " confidence (Holm-corrected across tasks).");
    }
  }
  page.muted("Sources: " + [&] {
    std::string s;
    for (const auto& src : r.sources) s += (s.empty() ? "" : ", ") + src;
    return s;
  }());
  return page.str();
}

}  // namespace rldk::evals
