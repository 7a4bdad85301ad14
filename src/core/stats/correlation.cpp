#include "stats/correlation.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "stats/distributions.h"
#include "stats/radix_sort.h"

namespace rldk::stats {

std::vector<double> average_ranks(std::span<const double> x) {
  std::vector<KeyedIndex> order = sorted_order(x);
  std::vector<double> ranks(x.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j < order.size() && order[j].key == order[i].key) ++j;
    double rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;  // mean of ranks i+1 .. j
    for (size_t k = i; k < j; ++k) ranks[order[k].index] = rank;
    i = j;
  }
  return ranks;
}

Correlation correlation_inference(double r, size_t n, double confidence, size_t lost_df) {
  Correlation c;
  c.r = r;
  c.n = n;
  if (std::isnan(r)) return c;
  double df = static_cast<double>(n) - 2 - static_cast<double>(lost_df);
  if (df > 0) {
    if (std::fabs(r) >= 1) {
      c.p_value = 0;  // a perfect fit: t is infinite
    } else {
      c.p_value = student_t_two_sided_p(r * std::sqrt(df / (1 - r * r)), df);
    }
  }
  if (df - 1 > 0) {
    if (std::fabs(r) >= 1) {
      c.ci_low = c.ci_high = r;
    } else {
      double half = normal_quantile((1 + confidence) / 2) / std::sqrt(df - 1);
      c.ci_low = std::tanh(std::atanh(r) - half);
      c.ci_high = std::tanh(std::atanh(r) + half);
    }
  }
  return c;
}

double pearson_r(std::span<const double> x, std::span<const double> y) {
  size_t n = std::min(x.size(), y.size());
  if (n < 2) return std::numeric_limits<double>::quiet_NaN();
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= static_cast<double>(n);
  my /= static_cast<double>(n);
  // Centred sums (two passes) rather than raw moments: rewards near 1e3 with spread 1e-3 stay exact.
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < n; ++i) {
    double dx = x[i] - mx, dy = y[i] - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  if (sxx <= 0 || syy <= 0) return std::numeric_limits<double>::quiet_NaN();
  return std::clamp(sxy / std::sqrt(sxx * syy), -1.0, 1.0);
}

Correlation pearson(std::span<const double> x, std::span<const double> y, double confidence, size_t lost_df) {
  return correlation_inference(pearson_r(x, y), std::min(x.size(), y.size()), confidence, lost_df);
}

Correlation spearman(std::span<const double> x, std::span<const double> y, double confidence, size_t lost_df) {
  size_t n = std::min(x.size(), y.size());
  std::vector<double> rx = average_ranks(x.first(n)), ry = average_ranks(y.first(n));
  return correlation_inference(pearson_r(rx, ry), n, confidence, lost_df);
}

}  // namespace rldk::stats
