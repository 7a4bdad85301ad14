// Trend tests for runs too short for a learned baseline: is a metric drifting steadily from its first logged
// values? Mann-Kendall (Kendall 1975) needs no noise model and no warm-up, and 20 points suffice for |Z| > 3.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace rldk::stats {

// Mann-Kendall statistic of x in time order: S = sum over i < j of sign(x_j - x_i), its variance with the tie
// correction, and the continuity-corrected normal score Z (positive: rising). O(n^2) pairs plus a sort.
struct MannKendall {
  double s = 0, variance = 0, z = 0;
  size_t n = 0;
};
MannKendall mann_kendall(std::span<const double> x);

// Least-squares line y = intercept + slope x with the two-sided p-value of slope != 0 from Student's t with n - 2
// degrees of freedom (SciPy: linregress). For a trend over few, evenly informative points (per-step means), where
// the size of the slope matters as well as its sign. slope and p are NaN for fewer than 3 points or constant x.
struct LinearFit {
  double slope = std::numeric_limits<double>::quiet_NaN(), intercept = std::numeric_limits<double>::quiet_NaN();
  double slope_stderr = std::numeric_limits<double>::quiet_NaN(), p_value = std::numeric_limits<double>::quiet_NaN();
  size_t n = 0;
};
LinearFit linear_fit(std::span<const double> x, std::span<const double> y);

// A whole run in bounded memory: keeps at most `capacity` points; when full, neighbouring pairs are averaged
// and each kept point stands for twice as many raw points as before. What remains is an evenly thinned copy of
// the run, enough for a trend test and for dating where a drift began, at O(capacity) memory however long the run.
class ThinnedSeries {
 public:
  explicit ThinnedSeries(size_t capacity = 512) : capacity_(std::max<size_t>(capacity & ~size_t{1}, 4)) {}
  void reset();
  void push(int64_t step, double value);
  std::span<const double> values() const { return values_; }
  std::span<const int64_t> steps() const { return steps_; }
  size_t raw_points() const { return raw_points_; }

 private:
  size_t capacity_;
  size_t stride_ = 1;           // raw points per kept point
  size_t pending_count_ = 0;    // raw points gathered for the next kept point
  double pending_sum_ = 0;
  int64_t pending_step_ = 0;
  size_t raw_points_ = 0;
  std::vector<double> values_;
  std::vector<int64_t> steps_;  // the first raw step of each kept point
};

}  // namespace rldk::stats
