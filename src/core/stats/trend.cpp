#include "stats/trend.h"

#include <algorithm>
#include <cmath>

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
