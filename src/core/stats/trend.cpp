#include "stats/trend.h"

#include <algorithm>
#include <cmath>

#include "stats/distributions.h"

namespace rldk::stats {

MannKendall mann_kendall(std::span<const double> x) {
  MannKendall r;
  r.n = x.size();
  if (r.n < 3) return r;
  for (size_t i = 0; i + 1 < r.n; ++i) {
    for (size_t j = i + 1; j < r.n; ++j) r.s += (x[j] > x[i]) - (x[j] < x[i]);
  }
  // Tied groups shrink the variance: sum over groups of t (t - 1) (2t + 5).
  std::vector<double> sorted(x.begin(), x.end());
  std::sort(sorted.begin(), sorted.end());
  double ties = 0;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
    double t = static_cast<double>(j - i);
    ties += t * (t - 1) * (2 * t + 5);
    i = j;
  }
  double n = static_cast<double>(r.n);
  r.variance = (n * (n - 1) * (2 * n + 5) - ties) / 18.0;
  if (r.variance <= 0) return r;
  if (r.s > 0) r.z = (r.s - 1) / std::sqrt(r.variance);
  if (r.s < 0) r.z = (r.s + 1) / std::sqrt(r.variance);
  return r;
}

LinearFit linear_fit(std::span<const double> x, std::span<const double> y) {
  LinearFit f;
  f.n = std::min(x.size(), y.size());
  if (f.n < 3) return f;
  double n = static_cast<double>(f.n), mx = 0, my = 0;
  for (size_t i = 0; i < f.n; ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= n;
  my /= n;
  double sxx = 0, sxy = 0, syy = 0;
  for (size_t i = 0; i < f.n; ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (sxx <= 0) return f;
  f.slope = sxy / sxx;
  f.intercept = my - f.slope * mx;
  double residual = std::max(0.0, syy - f.slope * sxy);  // sum of squared residuals
  double df = n - 2;
  f.slope_stderr = std::sqrt(residual / df / sxx);
  if (f.slope_stderr > 0) {
    f.p_value = student_t_two_sided_p(f.slope / f.slope_stderr, df);
  } else {
    f.p_value = f.slope == 0 ? 1.0 : 0.0;  // points exactly on a line: flat (no trend) or certain
  }
  return f;
}

void ThinnedSeries::reset() {
  stride_ = 1;
  pending_count_ = 0;
  pending_sum_ = 0;
  raw_points_ = 0;
  values_.clear();
  steps_.clear();
}

void ThinnedSeries::push(int64_t step, double value) {
  ++raw_points_;
  if (pending_count_ == 0) pending_step_ = step;
  pending_sum_ += value;
  if (++pending_count_ < stride_) return;
  values_.push_back(pending_sum_ / static_cast<double>(pending_count_));
  steps_.push_back(pending_step_);
  pending_count_ = 0;
  pending_sum_ = 0;
  if (values_.size() < capacity_) return;
  // Full: average neighbouring pairs, and from now on gather twice as many raw points per kept point.
  for (size_t i = 0; i < capacity_ / 2; ++i) {
    values_[i] = (values_[2 * i] + values_[2 * i + 1]) / 2;
    steps_[i] = steps_[2 * i];
  }
  values_.resize(capacity_ / 2);
  steps_.resize(capacity_ / 2);
  stride_ *= 2;
}

}  // namespace rldk::stats
