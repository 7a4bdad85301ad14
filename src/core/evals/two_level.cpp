// The two-level bootstrap for designs where both the seeds and the items vary (methods.md §1.2: "resample seeds,
// then items"): the seed-to-seed spread and the finite eval set both widen the interval.
#include "evals/intervals.h"
#include "evals/rng.h"
#include "rldk/evals.h"

namespace rldk::evals {
namespace {

double grand_mean(const std::vector<std::vector<double>>& x) {
  double sum = 0;
  size_t n = 0;
  for (const auto& row : x) {
    for (double v : row) sum += v;
    n += row.size();
  }
  return n == 0 ? NA : sum / static_cast<double>(n);
}

}  // namespace

Interval two_level_bootstrap(const std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b,
                             const BootstrapOptions& options) {
  if (a.empty() || b.empty()) return Interval{NA, NA, NA, "an arm has no seeds"};
  size_t items = a[0].size();
  for (const auto* arm : {&a, &b}) {
    for (const auto& row : *arm) {
      if (row.size() != items || items == 0) return Interval{NA, NA, NA, "seeds do not share the same items"};
    }
  }
  double estimate = grand_mean(b) - grand_mean(a);
  Rng rng(options.seed);
  std::vector<size_t> seeds_a(a.size()), seeds_b(b.size()), picked(items);
  std::vector<double> replicates;
  replicates.reserve(options.reps);
  for (size_t r = 0; r < options.reps; ++r) {
    for (auto& s : seeds_a) s = rng.below(a.size());
    for (auto& s : seeds_b) s = rng.below(b.size());
    for (auto& i : picked) i = rng.below(items);
    double sa = 0, sb = 0;
    for (size_t s : seeds_a) {
      for (size_t i : picked) sa += a[s][i];
    }
    for (size_t s : seeds_b) {
      for (size_t i : picked) sb += b[s][i];
    }
    double n = static_cast<double>(items);
    replicates.push_back(sb / (n * static_cast<double>(b.size())) - sa / (n * static_cast<double>(a.size())));
  }
  return detail::interval_from_replicates(estimate, replicates, options.confidence, IntervalMethod::percentile, {});
}

}  // namespace rldk::evals
