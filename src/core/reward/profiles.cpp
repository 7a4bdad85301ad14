// What the reward card draws besides the checks: the reward's quantile bands over steps and its mean per length
// bin. Descriptive, no verdict: they let a reader see the shape a finding describes.
#include <algorithm>
#include <map>
#include <numeric>

#include "reward/sample_table.h"
#include "stats/radix_sort.h"
#include "stats/robust.h"

namespace rldk::reward {

std::vector<StepDistribution> step_distribution(const ColumnData& column, const RewardHealthAccumulator::State& state) {
  std::map<int64_t, std::vector<double>> by_step;
  for (size_t k = 0; k < column.value.size(); ++k) by_step[state.step[column.sample[k]]].push_back(column.value[k]);
  std::vector<StepDistribution> out;
  out.reserve(by_step.size());
  for (auto& [step, values] : by_step) {
    stats::sort_values(values);
    out.push_back({step, values.size(), stats::quantile_sorted(values, 0.1), stats::quantile_sorted(values, 0.5),
                   stats::quantile_sorted(values, 0.9), stats::mean(values)});
  }
  return out;
}

std::vector<LengthBin> length_profile(const ColumnData& column, const RewardHealthAccumulator::State& state,
                                      size_t bins) {
  size_t n = column.value.size();
  bool any_text = std::any_of(column.sample.begin(), column.sample.end(), [&](size_t i) { return state.chars[i] > 0; });
  if (n == 0 || bins == 0 || !any_text) return {};
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return state.words[column.sample[a]] < state.words[column.sample[b]]; });
  // Equal-count bins, but a length never split across two bins (ties move to the bin where they start).
  std::vector<LengthBin> out;
  size_t start = 0;
  for (size_t b = 0; b < bins && start < n; ++b) {
    size_t end = std::max(start + 1, (b + 1) * n / bins);
    end = std::min(end, n);
    while (end < n && state.words[column.sample[order[end]]] == state.words[column.sample[order[end - 1]]]) ++end;
    LengthBin bin;
    bin.samples = end - start;
    bin.words_lo = state.words[column.sample[order[start]]];
    bin.words_hi = state.words[column.sample[order[end - 1]]];
    double words = 0, reward = 0;
    for (size_t k = start; k < end; ++k) {
      words += state.words[column.sample[order[k]]];
      reward += column.value[order[k]];
    }
    bin.words_mean = words / static_cast<double>(bin.samples);
    bin.reward_mean = reward / static_cast<double>(bin.samples);
    out.push_back(bin);
    start = end;
  }
  return out;
}

}  // namespace rldk::reward
