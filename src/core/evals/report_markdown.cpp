// The eval card as Markdown: verdict, per-task comparisons with their design and intervals, warnings about power,
// the aggregates per direction, and the gate.
#include "evals/format.h"
#include "report/markdown_text.h"
#include "rldk/evals.h"

namespace rldk::evals {
namespace {

std::string interval_text(const Interval& i) {
  if (std::isnan(i.estimate)) return i.note.empty() ? "n/a" : md_text(i.note);
  std::string s = fmt_number(i.estimate) + " [" + fmt_number(i.low) + ", " + fmt_number(i.high) + "]";
  if (!i.note.empty()) s += " (" + md_text(i.note) + ")";
  return s;
}

std::string p_text(double p) { return std::isnan(p) ? "n/a" : fmt_number(p, 3); }

}  // namespace

std::string evals_markdown(const EvalsReport& r) {
  const EvalsOptions& o = r.options;
  std::string md = "# rldk evals\n\n";
  if (!r.a.empty()) {
    md += "Verdict: **" + r.verdict + "**. " + md_text(r.summary) + "\n\n";
    md += "A = " + md_code(r.a) + ", B = " + md_code(r.b) + ". Improvements are B - A in each task's direction "
          "(positive = B better); intervals at " + fmt_percent(o.bootstrap.confidence) + " per task; verdicts use the "
          "p-values Holm-corrected across tasks.\n\n";
  } else {
    md += md_text(r.summary) + "\n\n";
  }
  for (const auto& w : r.warnings) md += "- warning: " + md_text(w) + "\n";
  if (!r.tasks.empty()) {
    md += "## Per task\n\n";
    md += "| task | better | design | A | B | improvement | interval | p (Holm) | verdict |\n";
    md += "|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& t : r.tasks) {
      std::string n = t.design == "paired" ? std::to_string(t.items) + " items"
                      : t.design == "two-level"
                          ? std::to_string(t.seeds_a) + "/" + std::to_string(t.seeds_b) + " seeds x " +
                                std::to_string(t.items) + " items"
                          : std::to_string(t.seeds_a) + "/" + std::to_string(t.seeds_b) + " seeds";
      md += "| " + md_text(t.task) + " | " + (t.direction == Direction::lower ? "lower" : "higher") + " | " +
            t.design + " (" + n + ") | " + fmt_number(t.mean_a) + " | " + fmt_number(t.mean_b) + " | " +
            fmt_number(t.improvement) + " | [" + fmt_number(t.ci_low) + ", " + fmt_number(t.ci_high) + "] | " +
            p_text(t.p_holm) + " | " + t.verdict + " |\n";
    }
    md += "\n";
    for (const auto& t : r.tasks) {
      std::vector<std::string> lines;
      lines.push_back("interval: " + md_text(t.interval));
      if (t.paired) {
        lines.push_back("paired t: t = " + fmt_number(t.paired->t) + ", df = " + fmt_number(t.paired->df) +
                        ", p = " + p_text(t.paired->p_value) + ", d_z = " + fmt_number(t.paired->effect_dz));
      }
      if (t.welch) {
        lines.push_back("Welch: t = " + fmt_number(t.welch->t) + ", df = " + fmt_number(t.welch->df) + ", p = " +
                        p_text(t.welch->p_value));
      }
      if (t.hedges_g) {
        lines.push_back("Hedges' g = " + fmt_number(t.hedges_g->value) + " [" + fmt_number(t.hedges_g->ci_low) +
                        ", " + fmt_number(t.hedges_g->ci_high) + "]");
      }
      if (t.mann_whitney) {
        lines.push_back("Mann-Whitney U = " + fmt_number(t.mann_whitney->u) + ", p = " +
                        p_text(t.mann_whitney->p_value) + (t.mann_whitney->exact ? " (exact)" : " (normal approx.)"));
      }
      if (std::isfinite(t.power)) {
        lines.push_back("power " + fmt_number(t.power, 2) + " to detect " + fmt_number(t.effect_for_power) +
                        (t.needed > 0 ? "; " + std::to_string(t.needed) +
                                            (t.design == "paired" ? " items" : " seeds per arm") + " needed for " +
                                            fmt_number(o.power, 2)
                                      : std::string()));
      }
      for (const auto& w : t.warnings) lines.push_back("warning: " + md_text(w));
      md += "**" + md_text(t.task) + "**\n\n";
      for (const auto& l : lines) md += "- " + l + "\n";
      md += "\n";
    }
  }
  for (const auto& s : r.summaries) {
    md += std::string("## Aggregates over ") + std::to_string(s.tasks.size()) + " " +
          (s.direction == Direction::lower ? "lower" : "higher") + "-is-better tasks\n\n";
    md += "Stratified bootstrap over runs within each task (" + std::to_string(o.bootstrap.reps) + " resamples, " +
          (o.bootstrap.method == IntervalMethod::bca ? "BCa" : "percentile") + ", seed " +
          std::to_string(o.bootstrap.seed) + ").\n\n";
    md += "| arm | runs/task | mean | median | IQM | optimality gap |\n|---|---|---|---|---|---|\n";
    for (const auto& a : s.arms) {
      md += "| " + md_text(a.arm) + " | " + std::to_string(a.runs_min) +
            (a.runs_max != a.runs_min ? "-" + std::to_string(a.runs_max) : "") + " | " + interval_text(a.mean) +
            " | " + interval_text(a.median) + " | " + interval_text(a.iqm) + " | " +
            interval_text(a.optimality_gap) + " |\n";
    }
    md += "\n";
    if (!r.a.empty()) {
      md += "P(B better than A) = " + interval_text(s.probability_of_improvement) + "\n\n";
    }
    for (const auto& n : s.notes) md += "- " + md_text(n) + "\n";
    if (!s.notes.empty()) md += "\n";
  }
  if (!r.a.empty()) {
    md += "## Gate\n\n";
    md += r.gate_failed ? "**FAIL**: B is worse than A beyond the margin " + fmt_number(o.margin) + ".\n\n"
                        : "pass: no task shows B worse than A by more than " + fmt_number(o.margin) + " at " +
                              fmt_percent(o.bootstrap.confidence) + " confidence.\n\n";
    for (const auto& g : r.gate_reasons) md += "- " + md_text(g) + "\n";
  }
  return md;
}

}  // namespace rldk::evals
