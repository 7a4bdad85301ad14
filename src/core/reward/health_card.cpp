// The reward card: `rldk reward health --out DIR` writes reward_health.html beside the JSON and Markdown. A person
// reads the verdict, each check's result, the correlations, the proxy-vs-gold curve and the quoted samples; all
// text goes through HtmlPage, which escapes it (column names and completions are untrusted).
#include <cmath>

#include "reward/report_parts.h"
#include "reward/sample_table.h"
#include "rldk/html_page.h"
#include "rldk/reward_health.h"

namespace rldk {
namespace {

ChartTone tone_of(const RewardCheck& c) {
  if (c.status == RewardCheckStatus::not_measurable) return ChartTone::Neutral;
  if (c.status == RewardCheckStatus::ok) return ChartTone::Good;
  switch (c.severity) {
    case Severity::critical: return ChartTone::Critical;
    case Severity::warning: return ChartTone::Warning;
    default: return ChartTone::Info;
  }
}

using reward::checks_of;

std::string status_text(const RewardCheck& c) {
  if (c.status != RewardCheckStatus::finding) return reward_check_status_name(c.status);
  return std::string("finding (") + severity_name(c.severity) + ")";
}

using reward::correlation_text;

void column_section(HtmlPage& page, const RewardColumnHealth& c) {
  page.heading("Reward " + c.name);
  page.facts({{"samples", std::to_string(c.samples)},
              {"range", reward::format_number(c.min) + " to " + reward::format_number(c.max)},
              {"mean", reward::format_number(c.mean)}});
  std::vector<std::vector<std::string>> rows;
  std::vector<ChartTone> tones;
  for (const auto& [name, check] : checks_of(c)) {
    rows.push_back({status_text(*check), name,
                    check->status == RewardCheckStatus::not_measurable ? check->reason : check->message});
    tones.push_back(tone_of(*check));
  }
  page.table({"status", "check", "result"}, rows, tones);

  const LengthBiasCheck& lb = c.length_bias;
  if (lb.samples > 0) {
    page.heading("Reward vs length (words)", 3);
    page.table({"correlation", "overall", "within group"},
               {{"Pearson", correlation_text(lb.pearson), correlation_text(lb.within_pearson)},
                {"Spearman", correlation_text(lb.spearman), correlation_text(lb.within_spearman)}});
    if (!std::isnan(lb.length_share)) {
      page.muted("Reward gain early to late " + reward::format_number(lb.delta_reward) + ", of which " +
                 reward::format_number(100 * lb.length_share) +
                 "% comes with the length shift (length-stratified gain, Singhal et al. 2023).");
    }
  }
  if (!c.gold.steps.empty()) {
    LineChart chart;
    chart.title = "proxy reward and gold score per step";
    chart.y_label = "mean";
    ChartSeries proxy{"proxy (" + c.name + ")", {}, {}, false}, gold{"gold", {}, {}, true};
    for (const auto& s : c.gold.steps) {
      proxy.steps.push_back(static_cast<double>(s.step));
      proxy.values.push_back(s.proxy_mean);
      gold.steps.push_back(static_cast<double>(s.step));
      gold.values.push_back(s.gold_mean);
    }
    chart.series = {proxy, gold};
    if (c.gold.window_steps > 0) {
      chart.markers.push_back({static_cast<double>(c.gold.window_first_step), "trend window", ChartTone::Info});
    }
    page.chart(chart);
  }
  if (!c.suspicious_samples.samples.empty()) {
    page.heading("Highest-reward samples that look like hacking", 3);
    for (const auto& s : c.suspicious_samples.samples) {
      std::string reasons;
      for (const auto& r : s.reasons) reasons += (reasons.empty() ? "" : ", ") + r;
      page.callout(s.source + " row " + std::to_string(s.row) + ", step " + std::to_string(s.step),
                   "reward " + reward::format_number(s.reward) + ", " + std::to_string(s.length_words) +
                       " words, repetition " + reward::format_number(s.repetition) + " (" + reasons + ")",
                   {}, ChartTone::Info);
      if (s.text_kept) page.code(s.text + (s.text_truncated ? " [...]" : ""));
    }
  }
}

}  // namespace

std::string reward_health_html(const RewardHealthReport& report) {
  HtmlPage page("Reward card", report.format + ", " + std::to_string(report.rows) + " samples over " +
                                   std::to_string(report.steps) + " steps");
  std::string verdict = reward_health_verdict(report);
  size_t findings = 0;
  for (const auto& c : report.columns) {
    for (const auto& [name, check] : checks_of(c)) {
      findings += check->status == RewardCheckStatus::finding && check->severity != Severity::info;
    }
  }
  page.verdict(verdict == "pass" ? "PASS" : verdict == "warn" ? "WARN" : "FAIL",
               verdict == "pass" ? "No check found a warning or a critical problem."
                                 : std::to_string(findings) + " warning or critical finding(s); see below.",
               verdict == "pass" ? ChartTone::Good : verdict == "warn" ? ChartTone::Warning : ChartTone::Critical);
  page.facts({{"steps", std::to_string(report.first_step) + " to " + std::to_string(report.last_step)},
              {"reward columns", std::to_string(report.columns.size())},
              {"groups", report.has_group ? "group column" : "prompt text (GRPO)"},
              {"gold score", report.has_gold ? "present" : "absent"}});
  for (const auto& c : report.columns) column_section(page, c);
  page.muted("Formulas and thresholds: docs/reward.md (rldk.reward-health/v1).");
  return page.str();
}

}  // namespace rldk
