// Performance profiles (rliable's run-score distributions): for each threshold tau, the fraction of runs scoring
// above it, averaged over tasks, with percentile bands from the stratified bootstrap.
#include <algorithm>

#include "evals/rng.h"
#include "rldk/evals.h"
#include "stats/robust.h"

namespace rldk::evals {
namespace {

void fractions_above(const TaskScores& scores, std::span<const double> tau, std::vector<double>& out) {
  out.assign(tau.size(), 0.0);
  for (const auto& task : scores) {
    if (task.empty()) continue;
    std::vector<double> sorted(task);
    std::sort(sorted.begin(), sorted.end());
    double n = static_cast<double>(sorted.size());
    for (size_t k = 0; k < tau.size(); ++k) {
      auto above = sorted.end() - std::upper_bound(sorted.begin(), sorted.end(), tau[k]);
      out[k] += static_cast<double>(above) / n;
    }
  }
  for (double& f : out) f /= static_cast<double>(scores.size());
}

}  // namespace

Profile performance_profile(const TaskScores& scores, std::span<const double> tau, const BootstrapOptions& options) {
  Profile p;
  p.tau.assign(tau.begin(), tau.end());
  if (scores.empty()) return p;
  fractions_above(scores, tau, p.fraction);
  std::vector<std::vector<double>> replicates(tau.size());
  Rng rng(options.seed);
  TaskScores buffer(scores.size());
  std::vector<double> f;
  for (size_t r = 0; r < options.reps; ++r) {
    for (size_t m = 0; m < scores.size(); ++m) {
      buffer[m].resize(scores[m].size());
      for (double& x : buffer[m]) x = scores[m][rng.below(scores[m].size())];
    }
    fractions_above(buffer, tau, f);
    for (size_t k = 0; k < tau.size(); ++k) replicates[k].push_back(f[k]);
  }
  double alpha = (1 - options.confidence) / 2;
  for (auto& rep : replicates) {
    std::sort(rep.begin(), rep.end());
    p.low.push_back(rep.empty() ? NA : stats::quantile_sorted(rep, alpha));
    p.high.push_back(rep.empty() ? NA : stats::quantile_sorted(rep, 1 - alpha));
  }
  return p;
}

std::vector<double> tau_grid(const std::vector<const TaskScores*>& arms, size_t n) {
  double lo = 0, hi = 0;
  bool any = false;
  for (const auto* arm : arms) {
    for (const auto& task : *arm) {
      for (double x : task) {
        if (!any) lo = hi = x;
        lo = std::min(lo, x);
        hi = std::max(hi, x);
        any = true;
      }
    }
  }
  std::vector<double> grid;
  if (!any || n == 0) return grid;
  if (n == 1 || lo == hi) return {lo};
  for (size_t k = 0; k < n; ++k) grid.push_back(lo + (hi - lo) * static_cast<double>(k) / static_cast<double>(n - 1));
  return grid;
}

}  // namespace rldk::evals
