// saturation: a reward pinned at one end of its range gives the policy no gradient to follow. Measured relative to
// the declared range or the observed one, never an assumed [-1, 1] (the older tool's mistake, docs/reward.md).
#include <algorithm>
#include <cmath>

#include "reward/sample_table.h"

namespace rldk::reward {

namespace {

// A reward with at most this many distinct values is graded (pass/fail, or the share of up to 10 tests passed).
constexpr size_t kMaxGradedLevels = 11;

// The number of distinct values, counting no further than `cap` (a reward model's scores are all distinct).
size_t count_levels(const std::vector<double>& values, size_t cap) {
  std::vector<double> seen;
  for (double v : values) {
    if (std::find(seen.begin(), seen.end(), v) != seen.end()) continue;
    seen.push_back(v);
    if (seen.size() >= cap) break;
  }
  return seen.size();
}

}  // namespace

SaturationCheck check_saturation(const ColumnData& column, const RewardHealthAccumulator::State& state,
                                 const StepWindows& windows, const RewardHealthOptions& options) {
  const RewardHealthThresholds& t = options.thresholds;
  SaturationCheck c;
  c.samples = column.value.size();
  if (column.value.empty()) {
    c.reason = "the column has no finite values";
    return c;
  }
  auto [min_it, max_it] = std::minmax_element(column.value.begin(), column.value.end());
  c.range_declared = options.range_lo.has_value() && options.range_hi.has_value();
  c.lo = c.range_declared ? *options.range_lo : *min_it;
  c.hi = c.range_declared ? *options.range_hi : *max_it;
  if (!(c.hi > c.lo)) {
    c.reason = c.range_declared ? "the declared range is empty (lo >= hi)"
                                : "every reward is equal and no range is declared (--reward-range), so there is no "
                                  "range to be saturated in";
    return c;
  }
  c.eps = t.saturation_bound_eps * (c.hi - c.lo);
  c.late_first_step = windows.late_first(t.saturation_late_window);
  size_t low = 0, high = 0, late_low = 0, late_high = 0;
  for (size_t k = 0; k < column.value.size(); ++k) {
    double v = column.value[k];
    bool at_low = std::fabs(v - c.lo) <= c.eps, at_high = std::fabs(v - c.hi) <= c.eps;
    if (c.range_declared && (v < c.lo - c.eps || v > c.hi + c.eps)) ++c.outside_range;
    bool late = state.step[column.sample[k]] >= c.late_first_step;
    low += at_low;
    high += at_high;
    if (late) {
      ++c.late_samples;
      late_low += at_low;
      late_high += at_high;
    }
  }
  auto n = static_cast<double>(c.samples), late_n = static_cast<double>(c.late_samples);
  c.share_low = static_cast<double>(low) / n;
  c.share_high = static_cast<double>(high) / n;
  c.late_share_low = static_cast<double>(late_low) / late_n;
  c.late_share_high = static_cast<double>(late_high) / late_n;

  // Verifiable rewards sit at a bound by construction: pass/fail, or the share of k unit tests passed (k + 1
  // levels). A failed attempt scoring 0 is the reward working, not a reward model pinned where it cannot tell
  // answers apart, so such a reward is judged on how one-sided the late samples are, as a pass/fail one is.
  // Whether its GRPO groups still carry signal is the zero-variance check's question.
  c.levels = count_levels(column.value, kMaxGradedLevels + 1);
  bool graded = c.levels <= kMaxGradedLevels;
  double warning = graded ? t.saturation_binary_warning : t.saturation_warning;
  double critical = graded ? t.saturation_binary_critical : t.saturation_critical;
  bool top = c.late_share_high >= c.late_share_low;
  double worst = std::max(c.late_share_low, c.late_share_high);
  std::string where = std::string(top ? "top" : "bottom") + " of its " + (c.range_declared ? "declared" : "observed") +
                      " range [" + format_number(c.lo) + ", " + format_number(c.hi) + "]";
  if (worst > warning) {
    c.status = RewardCheckStatus::finding;
    c.severity = worst > critical ? Severity::critical : Severity::warning;
    c.message = format_number(100 * worst, 3) + "% of late samples (steps >= " + std::to_string(c.late_first_step) +
                ") sit at the " + where + ": the reward has little signal left to give there.";
  } else {
    c.status = RewardCheckStatus::ok;
    c.message = "At most " + format_number(100 * worst, 3) + "% of late samples sit at a bound of the " +
                (c.range_declared ? "declared" : "observed") + " range.";
  }
  if (c.outside_range > 0) {
    c.message += " " + std::to_string(c.outside_range) + " sample(s) lie outside the declared range.";
  }
  return c;
}

}  // namespace rldk::reward
