// gold (Gao et al. 2022, methods.md §3.5): over-optimisation shows as the proxy reward still rising while a trusted
// gold/judge score falls. Compared on per-step means over the late half of training, where the turn happens. With
// the policy's KL per step, Gao et al.'s RL form is fitted against d = sqrt(KL) as well: it says where the gold
// peaks, so a run can be stopped at the peak rather than after the fall.
#include <algorithm>
#include <cmath>
#include <map>

#include "reward/sample_table.h"
#include "stats/least_squares.h"
#include "stats/trend.h"

namespace rldk::reward {
namespace {

// The KL at `step`: linear between the logged steps around it; NaN outside the logged span.
double kl_at(const KlSeries& kl, int64_t step) {
  auto it = std::lower_bound(kl.steps.begin(), kl.steps.end(), step);
  if (it == kl.steps.end()) return NO_VALUE;
  auto i = static_cast<size_t>(it - kl.steps.begin());
  if (*it == step) return kl.values[i];
  if (i == 0) return NO_VALUE;
  double w = static_cast<double>(step - kl.steps[i - 1]) / static_cast<double>(kl.steps[i] - kl.steps[i - 1]);
  return kl.values[i - 1] + w * (kl.values[i] - kl.values[i - 1]);
}

// Fits gold = r0 + alpha d - beta d ln d over the steps with a KL (d ln d -> 0 as d -> 0, so r0 is the initial
// policy's gold) and judges whether the KL has passed the peak.
void fit_gao(GoldCheck& c, const KlSeries& kl, const RewardHealthThresholds& t) {
  c.kl_metric = kl.metric;
  std::vector<double> ones, d, dlogd, gold;
  for (auto& s : c.steps) {
    s.kl = kl_at(kl, s.step);
    if (!std::isfinite(s.kl) || !std::isfinite(s.gold_mean)) continue;
    double root = std::sqrt(std::max(0.0, s.kl));
    ones.push_back(1);
    d.push_back(root);
    dlogd.push_back(root > 0 ? -root * std::log(root) : 0);
    gold.push_back(s.gold_mean);
    c.last_kl = s.kl;
  }
  c.fit_points = gold.size();
  if (c.fit_points < t.gold_fit_min_points) {
    c.fit_reason = std::to_string(c.fit_points) + " gold step(s) fall within the KL log (" + kl.metric +
                   "); the fit needs " + std::to_string(t.gold_fit_min_points);
    return;
  }
  auto fit = stats::least_squares({ones, d, dlogd}, gold);
  if (!fit) {
    c.fit_reason = "the KL does not vary enough over the gold steps to fit the form";
    return;
  }
  c.fit_r0 = fit->coefficients[0];
  c.fit_alpha = fit->coefficients[1];
  c.fit_beta = fit->coefficients[2];
  c.fit_r2 = fit->r2;
  if (!(c.fit_beta > 0)) {
    c.fit_reason = "the fitted curve has no peak (beta <= 0): the gold score has not bent over";
    return;
  }
  double peak_d = std::exp(c.fit_alpha / c.fit_beta - 1);
  c.peak_kl = peak_d * peak_d;
  auto curve = [&](double x) { return c.fit_r0 + c.fit_alpha * x - (x > 0 ? c.fit_beta * x * std::log(x) : 0); };
  c.peak_gold = curve(peak_d);
  double last_d = std::sqrt(std::max(0.0, c.last_kl));
  double gain = c.peak_gold - c.fit_r0, drop = c.peak_gold - curve(last_d);
  c.past_peak = c.fit_r2 >= t.gold_fit_min_r2 && last_d > peak_d && gain > 0 && drop >= t.gold_past_peak_drop * gain;
}

}  // namespace

GoldCheck check_gold(const ColumnData& column, const RewardHealthAccumulator::State& state,
                     const RewardHealthOptions& options) {
  const RewardHealthThresholds& t = options.thresholds;
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
  if (!options.kl.steps.empty()) fit_gao(c, options.kl, t);
  std::string peak;
  if (!c.kl_metric.empty() && c.fit_reason.empty()) {
    peak = "; fitted against sqrt(" + c.kl_metric + ") (Gao et al., R^2 " + format_number(c.fit_r2, 2) +
           "), gold peaks at KL " + format_number(c.peak_kl) + " and the KL is now " + format_number(c.last_kl);
  }
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
    c.message = "Over-optimisation: " + numbers + peak + ": the policy is gaming the proxy reward.";
  } else if (c.past_peak) {
    c.status = RewardCheckStatus::finding;
    c.severity = Severity::warning;
    c.message = "Past the gold peak: " + numbers + peak + ". Checkpoints near KL " + format_number(c.peak_kl) +
                " are the best the proxy gives; more optimisation trades gold for proxy.";
  } else {
    c.status = RewardCheckStatus::ok;
    c.message = "Gold does not fall while the proxy rises: " + numbers + peak + ".";
  }
  return c;
}

}  // namespace rldk::reward
