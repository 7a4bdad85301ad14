// Length-controlled win rate: the preference for B at equal length, from least squares of the preference on the
// length difference, with bootstrap intervals over items (docs/evals.md).
#include <cmath>

#include "evals/intervals.h"
#include "evals/rng.h"
#include "rldk/evals.h"

namespace rldk::evals {
namespace {

struct Fit {
  double mean = NA, intercept = NA, slope = NA;
};

// Sums over the chosen rows; with no spread in the length difference the slope is undefined and the intercept is
// the mean preference only when every difference is 0.
template <class Index>
Fit fit(std::span<const double> y, std::span<const double> x, size_t n, Index index) {
  double sy = 0, sx = 0;
  for (size_t k = 0; k < n; ++k) {
    sy += y[index(k)];
    sx += x[index(k)];
  }
  double nn = static_cast<double>(n), my = sy / nn, mx = sx / nn;
  double sxx = 0, sxy = 0;
  for (size_t k = 0; k < n; ++k) {
    double dx = x[index(k)] - mx;
    sxx += dx * dx;
    sxy += dx * (y[index(k)] - my);
  }
  Fit f;
  f.mean = my;
  if (sxx > 0) {
    f.slope = sxy / sxx;
    f.intercept = my - f.slope * mx;
  } else if (mx == 0) {
    f.intercept = my;
  }
  return f;
}

}  // namespace

LengthControlled length_controlled_win_rate(std::span<const double> preference,
                                            std::span<const double> length_difference,
                                            const BootstrapOptions& options) {
  LengthControlled r;
  if (preference.size() != length_difference.size() || preference.empty()) return r;
  size_t n = preference.size();
  r.n = n;
  double mx = 0;
  for (double x : length_difference) mx += x;
  r.mean_length_difference = mx / static_cast<double>(n);
  Fit full = fit(preference, length_difference, n, [](size_t k) { return k; });
  Rng rng(options.seed);
  std::vector<size_t> picked(n);
  std::vector<double> means, intercepts, slopes;
  for (size_t rep = 0; rep < options.reps; ++rep) {
    for (auto& i : picked) i = rng.below(n);
    Fit f = fit(preference, length_difference, n, [&](size_t k) { return picked[k]; });
    means.push_back(f.mean);
    intercepts.push_back(f.intercept);
    slopes.push_back(f.slope);
  }
  r.win_rate = detail::interval_from_replicates(full.mean, means, options.confidence, IntervalMethod::percentile, {});
  r.intercept = detail::interval_from_replicates(full.intercept, intercepts, options.confidence,
                                                 IntervalMethod::percentile, {});
  r.slope = detail::interval_from_replicates(full.slope, slopes, options.confidence, IntervalMethod::percentile, {});
  if (std::isnan(full.slope)) {
    r.slope.note = r.intercept.note = "the length difference does not vary: no length control is possible";
  }
  return r;
}

}  // namespace rldk::evals
