// gold (Gao et al. 2022, methods.md §3.5): over-optimisation shows as the proxy reward still rising while a trusted
// gold/judge score falls. Compared on per-step means over the late half of training, where the turn happens.
#include <algorithm>
#include <cmath>
#include <map>

#include "reward/sample_table.h"
#include "stats/trend.h"

namespace rldk::reward {

GoldCheck check_gold(const ColumnData& column, const RewardHealthAccumulator::State& state,
                     const RewardHealthThresholds& t) {
  GoldCheck c;
  if (!state.has_gold) {
    c.reason = "the samples have no gold/judge score column (--gold)";
    return c;
  }
  std::vector<double> proxy, gold;
  struct Sums {
    size_t samples = 0;
    double proxy = 0, gold = 0;
  };
  std::map<int64_t, Sums> by_step;
  for (size_t k = 0; k < column.value.size(); ++k) {
    size_t i = column.sample[k];
    if (std::isnan(state.gold[i])) continue;
    proxy.push_back(column.value[k]);
    gold.push_back(state.gold[i]);
    Sums& s = by_step[state.step[i]];
    ++s.samples;
    s.proxy += column.value[k];
    s.gold += state.gold[i];
  }
  c.samples = proxy.size();
  if (c.samples == 0) {
    c.reason = "no sample has both this reward and a gold score";
    return c;
  }
  for (const auto& [step, s] : by_step) {
    auto n = static_cast<double>(s.samples);
    c.steps.push_back({step, s.samples, s.proxy / n, s.gold / n});
  }
  c.spearman = estimate_of(stats::spearman(proxy, gold, t.confidence));
  auto window = static_cast<size_t>(std::llround(t.gold_late_window * static_cast<double>(c.steps.size())));
  window = std::min(window, c.steps.size());
  if (window < t.gold_min_steps) {
    c.reason = "the late window has " + std::to_string(window) + " step(s) with gold scores; a trend needs " +
               std::to_string(t.gold_min_steps);
    return c;
  }
  std::vector<double> x, proxy_means, gold_means;
  for (size_t s = c.steps.size() - window; s < c.steps.size(); ++s) {
    x.push_back(static_cast<double>(c.steps[s].step));
    proxy_means.push_back(c.steps[s].proxy_mean);
    gold_means.push_back(c.steps[s].gold_mean);
  }
  c.window_first_step = c.steps[c.steps.size() - window].step;
  c.window_steps = window;
  stats::LinearFit pf = stats::linear_fit(x, proxy_means), gf = stats::linear_fit(x, gold_means);
  c.proxy_slope = pf.slope;
  c.proxy_slope_p = pf.p_value;
  c.gold_slope = gf.slope;
  c.gold_slope_p = gf.p_value;
  std::string numbers = "over steps >= " + std::to_string(c.window_first_step) + " the proxy slope is " +
                        format_number(c.proxy_slope) + "/step and the gold slope " + format_number(c.gold_slope) +
                        "/step (p = " + format_number(c.gold_slope_p, 2) + ")";
  if (c.gold_slope < 0 && c.gold_slope_p < t.gold_p_value && c.proxy_slope > 0) {
    c.status = RewardCheckStatus::finding;
    c.severity = Severity::critical;
    c.message = "Over-optimisation: " + numbers + ": the policy is gaming the proxy reward.";
  } else {
    c.status = RewardCheckStatus::ok;
    c.message = "Gold does not fall while the proxy rises: " + numbers + ".";
  }
  return c;
}

}  // namespace rldk::reward
