// length_bias (Singhal et al. 2023, methods.md §3.3): does the reward pay for length? Two views: correlation of
// reward with length within a group (the same prompt at the same step, so prompt difficulty cannot fake it), and
// how much of the reward gain from early to late training survives when length is held fixed (non-length gain).
#include <algorithm>
#include <cmath>

#include "reward/sample_table.h"
#include "stats/radix_sort.h"
#include "stats/robust.h"

namespace rldk::reward {
namespace {

// Reward and length centred on their group means, for the groups of >= 2 samples.
void within_group(const ColumnData& column, const RewardHealthAccumulator::State& state, LengthBiasCheck& c,
                  double confidence) {
  const auto& groups = column.groups;
  c.within_groups = groups.size();
  if (groups.empty()) {
    c.within_reason = "no (step, group) has two or more samples";
    return;
  }
  std::vector<double> reward, length;
  for (const auto& g : groups) {
    double mr = 0, ml = 0;
    for (size_t k : g) {
      mr += column.value[k];
      ml += state.words[column.sample[k]];
    }
    mr /= static_cast<double>(g.size());
    ml /= static_cast<double>(g.size());
    for (size_t k : g) {
      reward.push_back(column.value[k] - mr);
      length.push_back(state.words[column.sample[k]] - ml);
    }
  }
  if (stats::variance(length, 0) <= 0) {
    c.within_reason = "completions of the same group all have the same length";
    return;
  }
  // Centring spends one degree of freedom per group beyond the one a correlation always spends.
  c.within_pearson = estimate_of(stats::pearson(reward, length, confidence, groups.size() - 1));
  c.within_spearman = estimate_of(stats::spearman(reward, length, confidence, groups.size() - 1));
  if (std::isnan(c.within_spearman.r)) c.within_reason = "rewards within groups do not vary";
}

void stratified_gain(const ColumnData& column, const RewardHealthAccumulator::State& state,
                     const StepWindows& windows, const RewardHealthThresholds& t, LengthBiasCheck& c) {
  if (windows.steps.size() < 2) {
    c.gain_reason = "all samples are from one step, so there is no early and late window to compare";
    return;
  }
  c.early_last_step = windows.early_last(t.length_window);
  c.late_first_step = windows.late_first(t.length_window);
  std::vector<double> pooled_lengths, pooled_rewards;
  double early_sum = 0, late_sum = 0;
  for (size_t k = 0; k < column.value.size(); ++k) {
    int64_t step = state.step[column.sample[k]];
    bool early = step <= c.early_last_step, late = step >= c.late_first_step;
    if (!early && !late) continue;
    pooled_lengths.push_back(state.words[column.sample[k]]);
    pooled_rewards.push_back(column.value[k]);
    (early ? early_sum : late_sum) += column.value[k];
    ++(early ? c.early_samples : c.late_samples);
  }
  if (c.early_samples == 0 || c.late_samples == 0) {
    c.gain_reason = "the early or the late window has no sample with this reward";
    return;
  }
  c.early_mean = early_sum / static_cast<double>(c.early_samples);
  c.late_mean = late_sum / static_cast<double>(c.late_samples);
  c.delta_reward = c.late_mean - c.early_mean;

  // Quantile bins of the pooled lengths; tied edges merge (many equal lengths make fewer, wider bins).
  std::vector<double> sorted = pooled_lengths;
  stats::sort_values(sorted);
  std::vector<double> edges;
  for (size_t b = 1; b < t.length_bins; ++b) {
    edges.push_back(stats::quantile_sorted(sorted, static_cast<double>(b) / static_cast<double>(t.length_bins)));
  }
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  struct Bin {
    size_t early = 0, late = 0;
    double early_sum = 0, late_sum = 0;
  };
  std::vector<Bin> bins(edges.size() + 1);
  // pooled_lengths is in the order of the windowed samples, so `pos` walks it alongside.
  for (size_t k = 0, pos = 0; k < column.value.size(); ++k) {
    int64_t step = state.step[column.sample[k]];
    bool early = step <= c.early_last_step, late = step >= c.late_first_step;
    if (!early && !late) continue;
    // x >= edge goes to the upper bin, as numpy.digitize.
    auto b = static_cast<size_t>(std::upper_bound(edges.begin(), edges.end(), pooled_lengths[pos]) - edges.begin());
    ++pos;
    if (early) {
      ++bins[b].early;
      bins[b].early_sum += column.value[k];
    } else {
      ++bins[b].late;
      bins[b].late_sum += column.value[k];
    }
  }
  double nrg = 0;
  size_t late_kept = 0;
  for (const auto& bin : bins) {
    if (bin.early < t.length_min_bin_samples || bin.late < t.length_min_bin_samples) continue;
    ++c.bins_used;
    late_kept += bin.late;
    nrg += static_cast<double>(bin.late) * (bin.late_sum / static_cast<double>(bin.late) -
                                             bin.early_sum / static_cast<double>(bin.early));
  }
  if (c.bins_used == 0) {
    c.gain_reason = "no length bin has " + std::to_string(t.length_min_bin_samples) +
                    " samples in both the early and the late window (the policy's lengths moved apart entirely, or "
                    "the windows are small)";
    return;
  }
  // Weights are the late window's shares over the bins kept, so they sum to 1.
  c.non_length_gain = nrg / static_cast<double>(late_kept);
  c.late_share_in_bins = static_cast<double>(late_kept) / static_cast<double>(c.late_samples);
  double spread = std::sqrt(stats::variance(pooled_rewards, 0));
  if (!(std::fabs(c.delta_reward) >= t.length_min_gain_std * spread) || c.delta_reward == 0) {
    c.gain_reason = "the mean reward barely moved between the windows (|dR| = " + format_number(std::fabs(c.delta_reward)) +
                    " < " + format_number(t.length_min_gain_std) + " reward std), so its split is noise";
    return;
  }
  c.nrg_share = c.non_length_gain / c.delta_reward;
  c.length_share = 1 - c.nrg_share;
}

}  // namespace

LengthBiasCheck check_length_bias(const ColumnData& column, const RewardHealthAccumulator::State& state,
                                  const StepWindows& windows, const RewardHealthThresholds& t) {
  LengthBiasCheck c;
  c.samples = column.value.size();
  if (c.samples < t.length_min_samples) {
    c.reason = "only " + std::to_string(c.samples) + " samples with this reward; length bias needs " +
               std::to_string(t.length_min_samples);
    return c;
  }
  std::vector<double> length;
  length.reserve(c.samples);
  for (size_t i : column.sample) length.push_back(state.words[i]);
  if (stats::variance(length, 0) <= 0) {
    c.reason = "every completion has the same length in words (or there is no completion text)";
    return c;
  }
  c.pearson = estimate_of(stats::pearson(column.value, length, t.confidence));
  c.spearman = estimate_of(stats::spearman(column.value, length, t.confidence));
  within_group(column, state, c, t.confidence);
  stratified_gain(column, state, windows, t, c);

  const CorrelationEstimate& w = c.within_spearman;
  bool correlated = w.r > t.length_spearman_warning && w.p_value < t.length_p_value;
  bool gain_from_length = c.length_share > t.length_share_warning && c.delta_reward > 0;
  std::string corr_text = std::isnan(w.r) ? "within-group Spearman not measurable (" + c.within_reason + ")"
                                          : "within-group Spearman " + format_number(w.r) + " (p = " +
                                                format_number(w.p_value, 2) + ", n = " + std::to_string(w.n) + ")";
  std::string gain_text = std::isnan(c.length_share)
                              ? "gain split not measurable (" + c.gain_reason + ")"
                              : format_number(100 * c.length_share, 3) + "% of the reward gain " +
                                    format_number(c.delta_reward) + " comes with the length shift";
  if (correlated || gain_from_length) {
    c.status = RewardCheckStatus::finding;
    c.severity = correlated && w.r > t.length_spearman_critical ? Severity::critical : Severity::warning;
    c.message = "The reward pays for length: " + corr_text + "; " + gain_text + ".";
  } else {
    c.status = RewardCheckStatus::ok;
    c.message = "No length preference beyond the thresholds: " + corr_text + "; " + gain_text + ".";
  }
  return c;
}

}  // namespace rldk::reward
