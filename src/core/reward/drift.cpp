// drift: how the reward distribution moved from the early to the late steps (KS for "did it move", Wasserstein for
// "by how much"). A reward that rises is what RL is for, so a significant move is context (info), not a fault; the
// other checks say whether the move is bought with length, saturation or a falling gold score.
#include <cmath>

#include "reward/sample_table.h"
#include "stats/robust.h"
#include "stats/two_sample.h"

namespace rldk::reward {

DriftCheck check_drift(const ColumnData& column, const RewardHealthAccumulator::State& state,
                       const StepWindows& windows, const RewardHealthThresholds& t) {
  DriftCheck c;
  if (windows.steps.size() < 2) {
    c.reason = "all samples are from one step, so there is no early and late window to compare";
    return c;
  }
  c.early_last_step = windows.early_last(t.drift_window);
  c.late_first_step = windows.late_first(t.drift_window);
  std::vector<double> early, late;
  for (size_t k = 0; k < column.value.size(); ++k) {
    int64_t step = state.step[column.sample[k]];
    if (step <= c.early_last_step) early.push_back(column.value[k]);
    else if (step >= c.late_first_step) late.push_back(column.value[k]);
  }
  c.early_samples = early.size();
  c.late_samples = late.size();
  if (early.size() < t.drift_min_window_samples || late.size() < t.drift_min_window_samples) {
    c.reason = "the early window has " + std::to_string(early.size()) + " and the late window " +
               std::to_string(late.size()) + " samples with this reward; drift needs " +
               std::to_string(t.drift_min_window_samples) + " in each";
    return c;
  }
  c.early_mean = stats::mean(early);
  c.late_mean = stats::mean(late);
  c.early_std = std::sqrt(stats::variance(early, 1));
  stats::KolmogorovSmirnov ks = stats::ks_two_sample(early, late);
  c.ks_statistic = ks.statistic;
  c.ks_p_value = ks.p_value;
  c.wasserstein = stats::wasserstein_distance(early, late);
  if (c.early_std > 0) c.wasserstein_early_std = c.wasserstein / c.early_std;
  std::string numbers = "KS D = " + format_number(c.ks_statistic) + " (p = " + format_number(c.ks_p_value, 2) +
                        "), Wasserstein " + format_number(c.wasserstein) +
                        (std::isnan(c.wasserstein_early_std)
                             ? ""
                             : " (" + format_number(c.wasserstein_early_std) + " early std)") +
                        "; mean " + format_number(c.early_mean) + " -> " + format_number(c.late_mean);
  if (c.ks_p_value < t.drift_p_value) {
    c.status = RewardCheckStatus::finding;
    c.severity = Severity::info;
    c.message = "The reward distribution moved between steps <= " + std::to_string(c.early_last_step) +
                " and steps >= " + std::to_string(c.late_first_step) + ": " + numbers + ".";
  } else {
    c.status = RewardCheckStatus::ok;
    c.message = "No clear move of the reward distribution: " + numbers + ".";
  }
  return c;
}

}  // namespace rldk::reward
