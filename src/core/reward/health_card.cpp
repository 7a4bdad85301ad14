// The reward card: `rldk reward health --out DIR` writes reward_health.html beside the JSON and Markdown. A person
// reads the verdict, each check's result, the correlations, the proxy-vs-gold curve and the quoted samples; all
// text goes through HtmlPage, which escapes it (column names and completions are untrusted).
#include <algorithm>
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

// A sample's file as the card names it: its last two path components (the JSON keeps the whole path).
std::string short_source(const std::string& path) {
  size_t last = path.find_last_of('/');
  if (last == std::string::npos || last == 0) return path;
  size_t before = path.find_last_of('/', last - 1);
  return before == std::string::npos ? path : path.substr(before + 1);
}

// Gold against KL with Gao et al.'s fitted curve and its peak: where the best checkpoint was.
void gold_kl_chart(HtmlPage& page, const GoldCheck& g) {
  LineChart chart;
  chart.title = "gold score against KL (" + g.kl_metric + "), with the fitted form r0 + alpha d - beta d ln d, d = sqrt(KL)";
  chart.x_label = "KL";
  chart.y_label = "gold";
  ChartSeries observed{"gold per step", {}, {}, false}, fitted{"fitted", {}, {}, true};
  double min_kl = INFINITY, max_kl = 0;
  for (const auto& s : g.steps) {
    if (std::isnan(s.kl)) continue;
    observed.steps.push_back(s.kl);
    observed.values.push_back(s.gold_mean);
    min_kl = std::min(min_kl, s.kl);
    max_kl = std::max(max_kl, s.kl);
  }
  // Points arrive in step order; the chart wants ascending x, and the KL may dip between logs.
  std::vector<size_t> order(observed.steps.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return observed.steps[a] < observed.steps[b]; });
  ChartSeries sorted{observed.label, {}, {}, false};
  for (size_t i : order) {
    sorted.steps.push_back(observed.steps[i]);
    sorted.values.push_back(observed.values[i]);
  }
  // The curve over the KL range the data covers: drawn from 0 it would stretch the axis to r0 and flatten the data.
  for (int k = 0; k <= 100; ++k) {
    double kl = min_kl + (max_kl - min_kl) * k / 100.0, d = std::sqrt(kl);
    fitted.steps.push_back(kl);
    fitted.values.push_back(g.fit_r0 + g.fit_alpha * d - (d > 0 ? g.fit_beta * d * std::log(d) : 0));
  }
  chart.series = {sorted, fitted};
  if (std::isfinite(g.peak_kl) && g.peak_kl >= min_kl && g.peak_kl <= max_kl) {
    chart.markers.push_back({g.peak_kl, "fitted peak", g.past_peak ? ChartTone::Critical : ChartTone::Info});
  }
  page.chart(chart);
}

void column_section(HtmlPage& page, const RewardColumnHealth& c) {
  page.heading("Reward column: " + c.name);
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

  if (c.by_step.size() >= 2) {
    LineChart bands;
    bands.title = "reward per step: median with the 10th and 90th percentiles";
    bands.y_label = c.name;
    ChartSeries p10{"10th percentile", {}, {}, true}, p50{"median", {}, {}, false}, p90{"90th percentile", {}, {}, true};
    for (const auto& d : c.by_step) {
      auto step = static_cast<double>(d.step);
      p10.steps.push_back(step);
      p10.values.push_back(d.p10);
      p50.steps.push_back(step);
      p50.values.push_back(d.p50);
      p90.steps.push_back(step);
      p90.values.push_back(d.p90);
    }
    bands.series = {p90, p50, p10};
    page.chart(bands);
  }
  if (c.by_length.size() >= 2) {
    LineChart profile;
    profile.title = "mean reward by completion length (equal-count bins of length)";
    profile.x_label = "words (bin mean)";
    profile.y_label = "mean " + c.name;
    ChartSeries line{"mean reward", {}, {}, false};
    for (const auto& b : c.by_length) {
      line.steps.push_back(b.words_mean);
      line.values.push_back(b.reward_mean);
    }
    profile.series = {line};
    page.chart(profile);
  }
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
  const ShortcutFeaturesCheck& sc = c.shortcut_features;
  if (sc.status != RewardCheckStatus::not_measurable) {
    page.heading("Surface features vs reward, within group", 3);
    std::vector<std::vector<std::string>> rows;
    std::vector<ChartTone> tones;
    for (const auto& f : sc.features) {
      std::string note = f.flagged ? "shortcut candidate" : !f.judged ? "judged by length_bias" : f.reason;
      rows.push_back({f.name, reward::format_number(100 * f.present_share) + "%", reward::format_number(f.r),
                      reward::format_number(f.partial_r2), reward::format_number(f.partial_p_value, 2), note});
      tones.push_back(f.flagged ? ChartTone::Warning : ChartTone::Neutral);
    }
    page.table({"feature", "present in", "within r", "r^2 beyond length", "p", "note"}, rows, tones);
    for (const auto& f : sc.features) {
      for (const auto& x : f.examples) {
        page.callout(f.name + ": " + short_source(x.source) + " row " + std::to_string(x.row) + ", step " + std::to_string(x.step),
                     "reward " + reward::format_number(x.reward) + ", " + f.name + " = " + reward::format_number(x.value),
                     {}, ChartTone::Warning);
        if (x.text_kept) page.code(x.text + (x.text_truncated ? " [...]" : ""));
      }
    }
  }
  if (!c.gold.steps.empty()) {
    LineChart chart;
    chart.title = "proxy reward and gold score per step";
    chart.y_label = "mean score";
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
  if (!std::isnan(c.gold.fit_beta)) gold_kl_chart(page, c.gold);
  if (!c.suspicious_samples.samples.empty()) {
    page.heading("Highest-reward samples that look like hacking", 3);
    for (const auto& s : c.suspicious_samples.samples) {
      std::string reasons;
      for (const auto& r : s.reasons) reasons += (reasons.empty() ? "" : ", ") + r;
      page.callout(short_source(s.source) + " row " + std::to_string(s.row) + ", step " + std::to_string(s.step),
                   "reward " + reward::format_number(s.reward) + ", " + std::to_string(s.length_words) +
                       " words, repetition " + reward::format_number(s.repetition) + " (" + reasons + ")",
                   {}, ChartTone::Info);
      if (s.text_kept) {
        std::string prompt = s.prompt.empty() ? "" : "prompt: " + s.prompt + (s.prompt_truncated ? " [...]" : "") + "\n\n";
        page.code(prompt + "completion: " + s.text + (s.text_truncated ? " [...]" : ""));
      }
    }
  }
}

void calibration_section(HtmlPage& page, const RewardHealthReport& report) {
  const CalibrationCheck& c = report.calibration;
  page.heading("Preference pairs");
  page.facts({{"pairs", std::to_string(report.pairs)}, {"read as", report.pair_format}});
  page.table({"status", "check", "result"},
             {{status_text(c), "calibration",
               c.status == RewardCheckStatus::not_measurable ? c.reason : c.message}},
             {tone_of(c)});
  if (c.status == RewardCheckStatus::not_measurable) return;
  using reward::format_number;
  page.facts({{"accuracy", format_number(c.accuracy) + " [" + format_number(c.accuracy_ci_low) + ", " +
                               format_number(c.accuracy_ci_high) + "]"},
              {"log-loss", format_number(c.log_loss)},
              {"Brier", format_number(c.brier)},
              {"ECE", format_number(c.ece) + " [" + format_number(c.ece_ci_low) + ", " + format_number(c.ece_ci_high) + "]"},
              {"temperature", c.temperature_reason.empty() ? format_number(c.temperature) : "n/a"}});
  // The reliability diagram: accuracy against mean confidence per bin; on the diagonal, sigma(margin) is a
  // probability.
  LineChart chart;
  chart.title = "reliability: accuracy vs confidence (pairs per bin in the table below)";
  chart.x_label = "confidence max(p, 1 - p)";
  chart.y_label = "accuracy";
  ChartSeries observed{"reward model", {}, {}, false}, ideal{"calibrated", {0.5, 1.0}, {0.5, 1.0}, true};
  std::vector<std::vector<std::string>> rows;
  for (const auto& b : c.bins) {
    if (b.pairs > 0) {
      observed.steps.push_back(b.confidence);
      observed.values.push_back(b.accuracy);
    }
    rows.push_back({format_number(b.lo, 2) + " to " + format_number(b.hi, 2), std::to_string(b.pairs),
                    format_number(b.confidence), format_number(b.accuracy)});
  }
  chart.series = {observed, ideal};
  page.chart(chart);
  page.table({"confidence bin", "pairs", "mean confidence", "accuracy"}, rows);
  if (!c.confidently_wrong.empty()) {
    page.heading("Most confidently wrong pairs", 3);
    for (const auto& w : c.confidently_wrong) {
      page.callout(short_source(w.source) + " row " + std::to_string(w.row),
                   "scores " + format_number(w.first_score) + " vs " + format_number(w.second_score) + ": " +
                       format_number(100 * w.confidence, 4) + "% sure of the completion that was not preferred",
                   {}, ChartTone::Warning);
      page.code("prompt: " + w.prompt + "\n\npreferred: " + w.preferred + "\n\nscored higher: " + w.other +
                (w.text_truncated ? " [...]" : ""));
    }
  }
}

}  // namespace

std::string reward_health_html(const RewardHealthReport& report) {
  std::string subtitle = report.rows > 0 || report.pairs == 0
                             ? report.format + ", " + std::to_string(report.rows) + " samples over " +
                                   std::to_string(report.steps) + " steps"
                             : report.pair_format + ", " + std::to_string(report.pairs) + " preference pairs";
  HtmlPage page("Reward card", subtitle);
  std::string verdict = reward_health_verdict(report);
  size_t findings = 0;
  for (const auto& c : report.columns) {
    for (const auto& [name, check] : checks_of(c)) {
      findings += check->status == RewardCheckStatus::finding && check->severity != Severity::info;
    }
  }
  findings += report.calibration.status == RewardCheckStatus::finding && report.calibration.severity != Severity::info;
  // Name them in the banner: the card is long, and a finding far down must not go unseen.
  std::string named;
  auto name = [&](const std::string& what, const RewardCheck& check) {
    if (check.status != RewardCheckStatus::finding || check.severity == Severity::info) return;
    named += (named.empty() ? "" : "; ") + what + " (" + severity_name(check.severity) + ")";
  };
  for (const auto& c : report.columns) {
    for (const auto& [check_name, check] : checks_of(c)) name(std::string(check_name) + " of " + c.name, *check);
  }
  name("calibration of the preference pairs", report.calibration);
  page.verdict(verdict == "pass" ? "PASS" : verdict == "warn" ? "WARN" : "FAIL",
               verdict == "pass" ? "No check found a warning or a critical problem."
                                 : std::to_string(findings) + " warning or critical finding(s): " + named + ".",
               verdict == "pass" ? ChartTone::Good : verdict == "warn" ? ChartTone::Warning : ChartTone::Critical);
  page.facts({{"steps", std::to_string(report.first_step) + " to " + std::to_string(report.last_step)},
              {"reward columns", std::to_string(report.columns.size())},
              {"groups", report.has_group ? "group column" : "prompt text (GRPO)"},
              {"gold score", report.has_gold ? "present" : "absent"}});
  for (const auto& c : report.columns) column_section(page, c);
  if (report.pairs > 0) calibration_section(page, report);
  page.muted("Formulas and thresholds: docs/reward.md (rldk.reward-health/v1).");
  return page.str();
}

}  // namespace rldk
