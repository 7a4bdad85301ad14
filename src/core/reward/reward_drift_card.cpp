// The drift card: `rldk reward drift --out DIR` writes reward_drift.html beside the JSON and Markdown. The verdict,
// the paired statistics, B against A, the slices and the samples the two models disagree on most. All text goes
// through HtmlPage, which escapes it (prompts, completions and column names are untrusted).
#include "reward/report_parts.h"
#include "reward/sample_table.h"
#include "rldk/html_page.h"
#include "rldk/reward_drift.h"

namespace rldk {

std::string reward_drift_html(const RewardDriftReport& r) {
  using reward::correlation_text;
  using reward::format_number;
  HtmlPage page("Reward drift card", "A: " + r.column_a + " (" + r.format_a + "), B: " + r.column_b + " (" +
                                         r.format_b + ")");
  ChartTone tone = r.verdict == "agree" ? ChartTone::Good : r.verdict == "drifted" ? ChartTone::Warning
                                                                                   : ChartTone::Critical;
  std::string label = r.verdict == "agree" ? "AGREE" : r.verdict == "drifted" ? "DRIFTED" : "DISAGREE";
  page.verdict(label, r.summary, tone);
  page.facts({{"paired samples", std::to_string(r.paired)},
              {"prompts", std::to_string(r.prompts) + " (" + std::to_string(r.prompt_groups) +
                              " with two or more samples)"},
              {"only in A / only in B", std::to_string(r.unpaired_a) + " / " + std::to_string(r.unpaired_b)},
              {"mean A / mean B", format_number(r.mean_a) + " / " + format_number(r.mean_b)}});
  page.table({"statistic", "value"},
             {{"Pearson", correlation_text(r.pearson)},
              {"Spearman", correlation_text(r.spearman)},
              {"Pearson within prompt", r.within_reason.empty() ? correlation_text(r.within_pearson) : r.within_reason},
              {"Spearman within prompt", r.within_reason.empty() ? correlation_text(r.within_spearman) : "n/a"},
              {"same-prompt pairs ordered alike", format_number(r.ranking_agreement) + " of " +
                                                      std::to_string(r.pairs - r.pairs_tied) + " (sign flips " +
                                                      format_number(r.sign_flip_rate) + ")"},
              {"Kendall tau-b within prompt", format_number(r.within_kendall)},
              {"B = a + b A", "b = " + format_number(r.slope) + ", a = " + format_number(r.intercept) +
                                  "; within prompt b = " + format_number(r.within_slope)},
              {"mean B - A (paired)", format_number(r.mean_difference) + " [" + format_number(r.ci_low) + ", " +
                                          format_number(r.ci_high) + "], paired t p = " +
                                          format_number(r.t_p_value, 2) + ", d_z = " + format_number(r.effect_size_dz)},
              {"older tool's fields", "drift magnitude " + format_number(r.drift_magnitude) + ", MAE of z " +
                                          format_number(r.mae_z) + ", sign disagreement " +
                                          format_number(r.sign_disagreement)}});
  if (r.profile.size() >= 2) {
    LineChart chart;
    chart.title = "mean score of B over equal-count bins of A's score (the diagonal: B = A)";
    chart.x_label = "A (" + r.column_a + "), bin mean";
    chart.y_label = "B (" + r.column_b + ")";
    ChartSeries b{"B", {}, {}, false}, same{"B = A", {}, {}, true};
    for (const auto& bin : r.profile) {
      b.steps.push_back(bin.a_mean);
      b.values.push_back(bin.b_mean);
    }
    same.steps = {r.profile.front().a_mean, r.profile.back().a_mean};
    same.values = same.steps;
    chart.series = {b, same};
    page.chart(chart);
  }
  if (!r.slices.empty()) {
    page.heading("Slices", 3);
    std::vector<std::vector<std::string>> rows;
    for (const auto& s : r.slices) {
      rows.push_back({s.name, s.pattern, std::to_string(s.n),
                      format_number(s.mean_difference) + " [" + format_number(s.ci_low) + ", " +
                          format_number(s.ci_high) + "]"});
    }
    page.table({"slice", "pattern", "n", "mean B - A"}, rows);
  }
  if (!r.examples.empty()) {
    page.heading("Where they disagree most", 3);
    for (const auto& e : r.examples) {
      page.callout("A " + format_number(e.a) + " (z " + format_number(e.z_a) + "), B " + format_number(e.b) + " (z " +
                       format_number(e.z_b) + ")",
                   "", {}, ChartTone::Warning);
      page.code("prompt: " + e.prompt + (e.completion.empty() ? "" : "\n\ncompletion: " + e.completion));
    }
  }
  page.muted("Formulas: docs/reward.md (rldk.reward-drift/v1).");
  return page.str();
}

}  // namespace rldk
