// zero_variance_groups: in GRPO a group whose samples all got the same reward has zero advantage and teaches
// nothing. Some such groups are expected (easy or impossible prompts); for binary rewards the expectation is
// p^G + (1 - p)^G per group (methods.md §3.2), so the check reports the excess over it, not just the share.
#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "reward/sample_table.h"

namespace rldk::reward {

ZeroVarianceCheck check_zero_variance(const ColumnData& column, const RewardHealthAccumulator::State& state,
                                      const RewardHealthThresholds& t) {
  ZeroVarianceCheck c;
  const auto& groups = column.groups;
  c.groups = groups.size();
  if (groups.empty()) {
    c.reason = "no (step, group) has two or more samples with this reward, so no group spread can be measured";
    return c;
  }
  for (const auto& g : groups) {
    double first = column.value[g.front()];
    bool flat = std::all_of(g.begin(), g.end(), [&](size_t k) { return column.value[k] == first; });
    c.zero_variance_groups += flat;
  }
  c.observed_share = static_cast<double>(c.zero_variance_groups) / static_cast<double>(c.groups);

  // Binary rewards: the expected count of flat groups from each prompt's pass rate over all its samples.
  auto [lo_it, hi_it] = std::minmax_element(column.value.begin(), column.value.end());
  double lo = *lo_it, hi = *hi_it;
  c.binary = lo < hi && std::all_of(column.value.begin(), column.value.end(), [&](double v) { return v == lo || v == hi; });
  if (c.binary) {
    std::unordered_map<uint64_t, std::pair<size_t, size_t>> passes;  // prompt -> (passes, samples)
    for (size_t k = 0; k < column.value.size(); ++k) {
      auto& [pass, total] = passes[state.prompt_hash[column.sample[k]]];
      pass += column.value[k] == hi;
      ++total;
    }
    double expected = 0, variance = 0;
    for (const auto& g : groups) {
      const auto& [pass, total] = passes[state.prompt_hash[column.sample[g.front()]]];
      double p = static_cast<double>(pass) / static_cast<double>(total);
      auto size = static_cast<double>(g.size());
      double q = std::pow(p, size) + std::pow(1 - p, size);
      expected += q;
      variance += q * (1 - q);  // flat-or-not per group: a sum of Bernoullis (Poisson-binomial)
    }
    c.expected_share = expected / static_cast<double>(c.groups);
    c.excess = c.observed_share - c.expected_share;
    if (variance > 0) c.excess_z = (static_cast<double>(c.zero_variance_groups) - expected) / std::sqrt(variance);
  }

  bool too_many = c.observed_share > t.zero_variance_share;
  bool excess = c.binary && !std::isnan(c.excess_z) && c.excess_z > t.zero_variance_excess_z;
  std::string observed = std::to_string(c.zero_variance_groups) + " of " + std::to_string(c.groups) + " groups (" +
                         format_number(100 * c.observed_share, 3) + "%) have zero reward spread";
  std::string expectation =
      c.binary ? "; " + format_number(100 * c.expected_share, 3) + "% expected from the prompts' pass rates (z = " +
                     format_number(c.excess_z, 3) + ")"
               : "";
  if (too_many || excess) {
    c.status = RewardCheckStatus::finding;
    c.severity = Severity::warning;
    c.message = observed + expectation + ": those groups give GRPO no advantage signal" +
                (excess ? ", more than pass rates explain (collapsed sampling diversity?)." : ".");
  } else {
    c.status = RewardCheckStatus::ok;
    c.message = observed + expectation + ".";
  }
  return c;
}

}  // namespace rldk::reward
