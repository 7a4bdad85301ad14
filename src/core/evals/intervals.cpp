#include "evals/intervals.h"

#include <algorithm>
#include <cmath>

#include "stats/distributions.h"
#include "stats/robust.h"

namespace rldk::evals::detail {

Interval interval_from_replicates(double estimate, std::vector<double>& replicates, double confidence,
                                  IntervalMethod method, const std::vector<double>& jackknife) {
  Interval out;
  out.estimate = estimate;
  // A statistic undefined on some resamples (e.g. a constant column) leaves NaN replicates; they are dropped.
  std::erase_if(replicates, [](double x) { return std::isnan(x); });
  if (replicates.empty() || std::isnan(estimate)) {
    out.note = "no bootstrap replicate could be computed";
    return out;
  }
  std::sort(replicates.begin(), replicates.end());
  double alpha = (1 - confidence) / 2;
  double q_low = alpha, q_high = 1 - alpha;
  if (method == IntervalMethod::bca) {
    auto below = static_cast<double>(std::lower_bound(replicates.begin(), replicates.end(), estimate) -
                                     replicates.begin());
    auto at_or_below = static_cast<double>(std::upper_bound(replicates.begin(), replicates.end(), estimate) -
                                           replicates.begin());
    double z0 = stats::normal_quantile((below + at_or_below) / (2.0 * static_cast<double>(replicates.size())));
    double accel = NA;
    if (jackknife.size() >= 2) {
      double m = stats::mean(jackknife), num = 0, den = 0;
      for (double j : jackknife) {
        double u = m - j;
        num += u * u * u;
        den += u * u;
      }
      if (den > 0) accel = num / (6 * std::pow(den, 1.5));
    }
    if (std::isfinite(z0) && std::isfinite(accel)) {
      auto adjusted = [&](double q) {
        double z = stats::normal_quantile(q);
        return stats::normal_cdf(z0 + (z0 + z) / (1 - accel * (z0 + z)));
      };
      q_low = adjusted(alpha);
      q_high = adjusted(1 - alpha);
    } else {
      out.note = "BCa undefined here (every replicate on one side of the estimate, or no jackknife spread); "
                 "percentile interval";
    }
  }
  out.low = stats::quantile_sorted(replicates, q_low);
  out.high = stats::quantile_sorted(replicates, q_high);
  return out;
}

}  // namespace rldk::evals::detail
