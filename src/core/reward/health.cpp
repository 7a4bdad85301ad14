// RewardHealthAccumulator::finish: runs every check per reward column and forms the verdict.
#include <algorithm>
#include <cmath>

#include "reward/report_parts.h"
#include "reward/sample_table.h"
#include "stats/robust.h"

namespace rldk {

const char* reward_check_status_name(RewardCheckStatus status) {
  switch (status) {
    case RewardCheckStatus::ok: return "ok";
    case RewardCheckStatus::finding: return "finding";
    case RewardCheckStatus::not_measurable: return "not_measurable";
  }
  return "not_measurable";
}

std::string reward_health_verdict(const RewardHealthReport& report) {
  bool critical = false, warning = false;
  auto judge = [&](const RewardCheck& check) {
    if (check.status != RewardCheckStatus::finding) return;
    critical = critical || check.severity == Severity::critical;
    warning = warning || check.severity == Severity::warning;
  };
  for (const auto& column : report.columns) {
    for (const auto& [name, check] : reward::checks_of(column)) judge(*check);
  }
  judge(report.calibration);
  return critical ? "fail" : warning ? "warn" : "pass";
}

Result<RewardHealthReport> reward_health(const std::vector<std::string>& sources, const SampleReadOptions& read,
                                         const RewardHealthOptions& options, Diagnostics& diagnostics) {
  RewardHealthAccumulator samples(400, 256, options.thresholds.shortcut_phrases);
  for (const auto& source : sources) {
    Status status = read_samples(source, read, samples, diagnostics, &samples);
    if (!status.ok()) return status.error();
  }
  return samples.finish(options);
}

RewardHealthReport RewardHealthAccumulator::finish(const RewardHealthOptions& options) const {
  const State& s = *state_;
  const RewardHealthThresholds& t = options.thresholds;
  RewardHealthReport r;
  r.format = s.format;
  r.rows = s.step.size();
  r.has_gold = s.has_gold;
  r.has_group = s.has_group;
  r.has_step = s.has_step;
  r.range_lo = options.range_lo;
  r.range_hi = options.range_hi;
  r.confidence = t.confidence;
  reward::StepWindows all_steps = reward::step_windows(s.step);
  r.steps = all_steps.steps.size();
  if (!all_steps.steps.empty()) {
    r.first_step = all_steps.steps.front();
    r.last_step = all_steps.steps.back();
  }
  for (size_t column = 0; column < s.reward_names.size(); ++column) {
    RewardColumnHealth h;
    h.name = s.reward_names[column];
    reward::ColumnData data = reward::column_data(s, column);
    h.samples = data.value.size();
    if (!data.value.empty()) {
      auto [lo, hi] = std::minmax_element(data.value.begin(), data.value.end());
      h.min = *lo;
      h.max = *hi;
      h.mean = stats::mean(data.value);
    }
    // Windows over the steps where this column has values (a reward function added mid-run has its own span).
    std::vector<int64_t> steps;
    steps.reserve(data.sample.size());
    for (size_t i : data.sample) steps.push_back(s.step[i]);
    reward::StepWindows windows = reward::step_windows(steps);
    h.by_step = reward::step_distribution(data, s);
    h.by_length = reward::length_profile(data, s, t.length_bins);
    h.saturation = reward::check_saturation(data, s, windows, options);
    h.zero_variance_groups = reward::check_zero_variance(data, s, t);
    h.length_bias = reward::check_length_bias(data, s, windows, t);
    h.drift = reward::check_drift(data, s, windows, t);
    h.gold = reward::check_gold(data, s, options);
    h.suspicious_samples = reward::check_suspicious(data, s, column, t);
    h.shortcut_features = reward::check_shortcut_features(data, s, column, t);
    r.columns.push_back(std::move(h));
  }
  r.pairs = s.pair_margin.size();
  r.pair_format = s.pair_format;
  r.calibration = reward::check_calibration(s, t);
  r.verdict = reward_health_verdict(r);
  return r;
}

}  // namespace rldk
