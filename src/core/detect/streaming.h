// Streaming building blocks shared by the detector kinds: a robust, slowly adapting reference level, a fixed ring
// window with running sums, and the episode being built. CUSUM with its change-time estimate is stats::Cusum.
// All state is fixed-size after the warm-up: no allocation per point.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "stats/cusum.h"
#include "stats/robust.h"

namespace rldk::detect {

inline constexpr double NaN = std::numeric_limits<double>::quiet_NaN();
using stats::Cusum;
using stats::difference_noise;
using stats::MAD_TO_SIGMA;
using stats::MEAN_ABS_TO_SIGMA;
using stats::median_and_sigma;
// Per-point damping of a forecast's slope while the reference is frozen (see AdaptiveReference::advance).
inline constexpr double FROZEN_TREND_DAMPING = 0.9;

// The expected level and noise scale of a metric: median/MAD of a warm-up, then exponentially weighted updates
// with rate `rate`, fed only with points the caller judges in control. Adapting slowly lets it follow trends and
// schedules (so they are not alarms), while the caller freezes it as soon as a change starts to accumulate (so a
// real shift is not absorbed). The scale never drops below max(min_scale, min_relative_scale x |level|): a
// metric that is nearly constant during the warm-up would otherwise turn any wiggle into an alarm.
//
// With trend_rate > 0 the reference also carries a slope (Holt's linear method in error-correction form): the
// warm-up is fitted with least-squares lines (see fit_line), each point is compared with the one-step forecast
// level + slope, and the slope learns from forecast errors at rate x trend_rate. A metric that moves smoothly (KL
// growing as the policy leaves its reference, entropy decaying) is then followed instead of read as a shift, while a
// step still shows as a run of large forecast errors. While frozen, the forecast extrapolates a damped slope.
class AdaptiveReference {
 public:
  // line_end: without a slope (trend_rate 0), the warm-up is still judged where its least-squares line ended, with
  // the noise around that line (see warm_up).
  void configure(int warmup, double rate, double min_relative_scale, double min_scale, double trend_rate = 0.0,
                 bool line_end = false) {
    warmup_ = std::max(warmup, 3);
    line_end_ = line_end;
    rate_ = rate;
    trend_rate_ = trend_rate;
    min_relative_scale_ = min_relative_scale;
    min_scale_ = min_scale;
    warm_.reserve(static_cast<size_t>(warmup_));
  }
  void reset() {
    warm_.clear();
    armed_ = false;
    trend_ = 0;
    bias_ = 0;
  }
  bool armed() const { return armed_; }
  // How many warm-up values have been collected, and their median and robust scale so far (a provisional reference
  // for judging a point before the warm-up is complete). `scratch` is overwritten.
  int warmed() const { return static_cast<int>(warm_.size()); }
  void provisional(std::vector<double>& scratch, double& median, double& sigma) const {
    scratch.assign(warm_.begin(), warm_.end());
    median_and_sigma(scratch, median, sigma);
    sigma = floor_scale(sigma);
  }
  // The same for judging a change in the watched direction (sign +1 up, -1 down, 0 both): the level is the median
  // of the warm-up so far or of its last `recent` values, whichever lies further against that direction (where the
  // metric started, for a ramp that began at once; where it is now, for a metric that moved steadily first, such as
  // entropy falling as RL sharpens the policy, then surged), and the scale is the point-to-point noise
  // (stats::difference_noise): a steady move spreads the values far wider than their noise.
  void provisional_recent(std::vector<double>& scratch, size_t recent, int sign, double& level, double& sigma) const {
    scratch.assign(warm_.begin(), warm_.end());
    level = stats::median_in_place(scratch);
    size_t n = std::min(recent, warm_.size());
    scratch.assign(warm_.end() - static_cast<std::ptrdiff_t>(n), warm_.end());
    double now = stats::median_in_place(scratch);
    if (sign > 0) level = std::min(level, now);
    if (sign < 0) level = std::max(level, now);
    scratch.assign(warm_.begin(), warm_.end());
    sigma = floor_scale(stats::difference_noise(scratch));
  }
  // Collects a warm-up value; true once the reference is ready (the value that arms it is not scored).
  bool warm_up(double x) {
    warm_.push_back(x);
    if (static_cast<int>(warm_.size()) < warmup_) return false;
    double median = 0, sigma = 0;
    if (trend_rate_ > 0) {
      fit_line();  // sets level_ and trend_, and leaves the residuals of the whole warm-up in warm_
      median_and_sigma(warm_, median, sigma);
    } else if (line_end_) {
      // No slope is carried, but a warm-up that moved steadily (entropy falling as RL sharpens the policy) is judged
      // where it ended, with the noise around its line: its median lags, and its spread is the move, not noise.
      double slope = 0;
      line(0, level_, slope);
      subtract_line(level_, slope);
      median_and_sigma(warm_, median, sigma);
      level_ += median;
    } else {
      median_and_sigma(warm_, median, sigma);
      level_ = median;
    }
    sigma_ = sigma;
    armed_ = true;
    warm_.clear();
    return true;
  }
  // The level expected at the next point.
  double forecast() const { return level_ + trend_; }
  double z(double x) const { return (x - forecast()) / scale(); }
  // With a slope, the scale learns from errors around their own running mean: a trend-following forecast lags a
  // curving metric for a while and makes errors of one sign, and that bias is not noise.
  void learn(double x) {
    double f = forecast();
    double error = x - f;
    level_ = f + rate_ * error;
    trend_ += rate_ * trend_rate_ * error;
    if (trend_rate_ > 0) bias_ += rate_ * (error - bias_);
    sigma_ += rate_ * (MEAN_ABS_TO_SIGMA * std::fabs(error - bias_) - sigma_);
  }
  // Moves the forecast's level to `level` (slope and scale kept): after a suspected change that did not hold up,
  // while the reference was frozen and drifted from the data.
  void reanchor(double level) {
    level_ = level;
    bias_ = 0;
  }
  // A point the caller does not learn from: the forecast moves on along the slope, damped (x0.9 per point) so that
  // a slope learned from noise cannot carry a frozen forecast far from the data.
  void advance() {
    level_ += trend_;
    trend_ *= FROZEN_TREND_DAMPING;
  }
  double scale() const { return floor_scale(sigma_); }

 private:
  double floor_scale(double s) const {
    return std::max({s, min_scale_, min_relative_scale_ * std::fabs(level_)});
  }
  // Least-squares line through warm_[from..n-1] (x = index): its value at the last point and its slope.
  void line(size_t from, double& end_value, double& slope) const {
    double n = static_cast<double>(warm_.size() - from), mean_x = static_cast<double>(from) + (n - 1) / 2, mean_y = 0;
    for (size_t i = from; i < warm_.size(); ++i) mean_y += warm_[i];
    mean_y /= n;
    double sxy = 0, sxx = 0;
    for (size_t i = from; i < warm_.size(); ++i) {
      double dx = static_cast<double>(i) - mean_x;
      sxy += dx * (warm_[i] - mean_y);
      sxx += dx * dx;
    }
    slope = sxx > 0 ? sxy / sxx : 0;
    end_value = mean_y + slope * (static_cast<double>(warm_.size() - 1) - mean_x);
  }
  // The scale comes from the residuals of a line through the whole warm-up; the level and slope the forecast
  // starts from, from a line through its second half: early curves (KL leaving zero, entropy falling fast)
  // decelerate, and the whole warm-up's slope would overshoot. Replaces warm_ with the residuals.
  void fit_line() {
    double end_all = 0, slope_all = 0;
    line(0, end_all, slope_all);
    line(warm_.size() / 2, level_, trend_);
    subtract_line(end_all, slope_all);
  }
  // Replaces warm_ with its residuals around the line that ends at end_value with this slope.
  void subtract_line(double end_value, double slope) {
    double last = static_cast<double>(warm_.size() - 1);
    for (size_t i = 0; i < warm_.size(); ++i) warm_[i] -= end_value - slope * (last - static_cast<double>(i));
  }
  int warmup_ = 30;
  double rate_ = 0.02, trend_rate_ = 0.0;
  double min_relative_scale_ = 0.0;
  double min_scale_ = 1e-12;
  std::vector<double> warm_;
  bool armed_ = false, line_end_ = false;
  double level_ = 0, trend_ = 0, bias_ = 0, sigma_ = 0;
};

// The last `capacity` values (and their steps) with running sums, for trailing means and the change between the
// older and the newer half of the window. O(1) per push. Sums are kept relative to the first value after a reset,
// so a small wiggle on a large level (memory in GB, token counts) keeps its precision.
class RingWindow {
 public:
  void configure(int capacity) {
    capacity_ = std::max(capacity, 2);
    values_.assign(static_cast<size_t>(capacity_), 0.0);
    steps_.assign(static_cast<size_t>(capacity_), 0);
    reset();
  }
  void reset() {
    count_ = 0;
    head_ = 0;
    sum_ = sum_sq_ = older_sum_ = 0;
  }
  void push(double value, int64_t step) {
    if (count_ == 0) shift_ = value;
    double x = value - shift_;
    int half = capacity_ / 2;
    if (count_ == capacity_) {
      double out = values_[static_cast<size_t>(head_)];
      double moving = values_[static_cast<size_t>((head_ + half) % capacity_)];
      older_sum_ += moving - out;
      sum_ -= out;
      sum_sq_ -= out * out;
      values_[static_cast<size_t>(head_)] = x;
      steps_[static_cast<size_t>(head_)] = step;
      head_ = (head_ + 1) % capacity_;
    } else {
      values_[static_cast<size_t>(head_)] = x;
      steps_[static_cast<size_t>(head_)] = step;
      head_ = (head_ + 1) % capacity_;
      ++count_;
      if (count_ == capacity_) {
        older_sum_ = 0;
        for (int i = 0; i < half; ++i) older_sum_ += values_[static_cast<size_t>(i)];
      }
    }
    sum_ += x;
    sum_sq_ += x * x;
  }
  bool full() const { return count_ == capacity_; }
  int size() const { return count_; }
  int capacity() const { return capacity_; }
  double mean() const { return count_ ? shift_ + sum_ / count_ : NaN; }
  double stddev() const {
    if (count_ < 2) return NaN;
    double m = sum_ / count_;
    return std::sqrt(std::max(0.0, sum_sq_ / count_ - m * m));
  }
  // Mean of the older half and of the newer half of a full window.
  double older_mean() const { return shift_ + older_sum_ / (capacity_ / 2); }
  double newer_mean() const { return shift_ + (sum_ - older_sum_) / (capacity_ - capacity_ / 2); }
  // i = 0 is the oldest element held.
  double at_from_oldest(int i) const { return shift_ + values_[index_from_oldest(i)]; }
  int64_t step_from_oldest(int i) const { return steps_[index_from_oldest(i)]; }

 private:
  size_t index_from_oldest(int i) const {
    int start = count_ == capacity_ ? head_ : 0;
    return static_cast<size_t>((start + i) % capacity_);
  }
  int capacity_ = 2;
  std::vector<double> values_;
  std::vector<int64_t> steps_;
  int count_ = 0, head_ = 0;
  double shift_ = 0, sum_ = 0, sum_sq_ = 0, older_sum_ = 0;
};

// An anomalous stretch being built: where it began, how far it went, and its most extreme point.
struct Episode {
  bool open = false;
  int64_t onset = 0, end = 0, peak_step = 0;
  double peak_value = 0, peak_score = 0;
  double sum = 0;  // of the values inside, for the episode's mean level
  int64_t points = 0;
  int64_t quiet_points = 0;  // consecutive non-anomalous points since the last anomalous one

  void begin(int64_t onset_step) {
    *this = Episode{};
    open = true;
    onset = end = peak_step = onset_step;
  }
  // An anomalous point; `score` ranks how extreme it is (the peak has the largest score).
  void add(int64_t step, double value, double score) {
    if (points == 0 || score > peak_score) {
      peak_score = score;
      peak_step = step;
      peak_value = value;
    }
    end = step;
    sum += value;
    ++points;
    quiet_points = 0;
  }
  double mean() const { return points ? sum / static_cast<double>(points) : NaN; }
};

}  // namespace rldk::detect
