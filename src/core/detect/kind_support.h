// What the detector kinds share: direction and log-scale handling, sustained-condition episodes, and one factory
// per kind (each kind lives in its own source file; kinds.cpp maps kind names to factories).
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "detect/kinds.h"
#include "detect/streaming.h"

namespace rldk::detect {

inline constexpr double LOG_FLOOR = 1e-12;
// Smoothing rate of the level a level shift reaches (an exponentially weighted mean over its episode).
inline constexpr double LEVEL_SMOOTHING = 0.2;

// Per-point direction test: +1 up, -1 down, 0 both.
inline int direction_sign(const DetectorSpec& spec, const char* name = "direction") {
  std::string d = spec.option(name, "both");
  return d == "up" ? 1 : d == "down" ? -1 : 0;
}

inline bool direction_allows(int sign, double deviation) {
  return sign == 0 || (sign > 0 && deviation > 0) || (sign < 0 && deviation < 0);
}

// The early judgement of a point before a warm-up is complete (spike, level_shift): its deviation from the median of
// the warm-up so far is at least `min_change` (a ratio on a log scale, known for the metric) and `min_z` of that
// warm-up's robust sigmas, in a direction the detector watches. Sets z.
inline bool early_departure(double deviation, double sigma, double min_change, double min_z, int sign, double& z) {
  z = deviation / sigma;
  return std::fabs(deviation) >= min_change && std::fabs(z) >= min_z && direction_allows(sign, deviation);
}

// Value in the detector's working units; NaN to skip the point (non-finite values have their own detector).
inline double transformed(bool log_scale, double x) {
  if (!std::isfinite(x)) return NaN;
  if (!log_scale) return x;
  // Zero is the end point of what log-scale metrics measure (a gradient norm or entropy that vanished), so it maps
  // to a very small positive value instead of being dropped.
  return std::log(std::max(x, LOG_FLOOR));
}

// An anomalous condition that must hold for `min_points` points (allowing `max_gap` quiet points inside) before it
// is an episode; the episode closes after more than `max_gap` quiet points.
class Sustained {
 public:
  void configure(int64_t min_points, int64_t max_gap) {
    min_points_ = std::max<int64_t>(min_points, 1);
    max_gap_ = std::max<int64_t>(max_gap, 0);
  }
  void reset() { episode_.open = false; }
  // Returns true when an episode just closed and is long enough to report (read it with episode()).
  bool feed(int64_t step, bool anomalous, double value, double score) {
    confirmed_ = false;
    if (anomalous) {
      if (!episode_.open) episode_.begin(step);
      episode_.add(step, value, score);
      confirmed_ = episode_.points == min_points_;
      return false;
    }
    if (!episode_.open) return false;
    if (++episode_.quiet_points > max_gap_) return close();
    return false;
  }
  bool close() {
    if (!episode_.open) return false;
    episode_.open = false;
    return episode_.points >= min_points_;
  }
  const Episode& episode() const { return episode_; }
  Episode& episode() { return episode_; }
  // True right after the feed() that brought the open episode to min_points: it will be reported when it closes.
  bool confirmed() const { return confirmed_; }

 private:
  Episode episode_;
  int64_t min_points_ = 1, max_gap_ = 0;
  bool confirmed_ = false;
};


// Conditions on a detector's inputs at one point (the catalog's `when:` and `contradicted_when:`): each names a role,
// optionally multiplied and divided by others, and a bound it must pass. Roles are resolved to input indices once.
class Conditions {
 public:
  Conditions() = default;
  Conditions(const std::vector<ThresholdCondition>& conditions, const DetectorSpec& spec) {
    for (const auto& c : conditions) {
      Probe p{c, 0, -1, -1};
      for (size_t i = 0; i < spec.inputs.size(); ++i) {
        if (spec.inputs[i].first == c.input) p.input = i;
        if (!c.divide_by.empty() && spec.inputs[i].first == c.divide_by) p.divisor = static_cast<std::ptrdiff_t>(i);
        if (!c.multiply_by.empty() && spec.inputs[i].first == c.multiply_by) p.factor = static_cast<std::ptrdiff_t>(i);
      }
      probes_.push_back(p);
    }
  }
  bool empty() const { return probes_.empty(); }
  size_t size() const { return probes_.size(); }
  const ThresholdCondition& condition(size_t i) const { return probes_[i].condition; }
  // The value condition i compares (NaN when an input it needs has none).
  double value(size_t i, const double* x) const {
    const Probe& p = probes_[i];
    double v = x[p.input];
    if (p.factor >= 0) v *= x[p.factor];  // a missing factor (NaN) leaves no value
    if (p.divisor >= 0) {
      double d = x[p.divisor];
      // Ratios are of scales (norms, standard deviations, lengths): a non-positive divisor is not one.
      v = d > 0 && std::isfinite(d) ? v / d : NaN;
    }
    return p.condition.absolute ? std::fabs(v) : v;
  }
  bool holds(size_t i, const double* x) const {
    double v = value(i, x);
    const ThresholdCondition& c = probes_[i].condition;
    return std::isfinite(v) && ((c.has_above && v > c.above) || (c.has_below && v < c.below));
  }
  bool all_hold(const double* x) const {
    if (probes_.empty()) return false;
    for (size_t i = 0; i < probes_.size(); ++i) {
      if (!holds(i, x)) return false;
    }
    return true;
  }

 private:
  struct Probe {
    ThresholdCondition condition;
    size_t input;
    std::ptrdiff_t divisor, factor;
  };
  std::vector<Probe> probes_;
};

// A metric's smoothed level (the median of its last `smooth` points: one odd batch does not move it) with the last
// `history` points behind it, for kinds that judge the level against the most extreme one so far (drawdown,
// rebound): the recent points' noise, and where a move away from an extreme began.
class SmoothedLevel {
 public:
  void configure(int smooth, int history) {
    smooth_ = std::max(1, smooth);
    recent_.configure(smooth_);
    history_.configure(std::max(8, history));
  }
  void reset() {
    recent_.reset();
    history_.reset();
  }
  // Adds a point; true once `smooth` points are in, when level() is the smoothed level.
  bool push(double v, int64_t step);
  double level() const { return level_; }
  // Point-to-point noise of the history (stats::difference_noise).
  double noise();
  // Where the move away from the extreme at `extreme_step` began: a hinge (stats::ramp_start) over the points since
  // it (less the smooth - 1 points its median covered), `toward` = +1 for a climb, -1 for a fall.
  int64_t onset_after(int64_t extreme_step, double toward);
  // The smoothed level as it stood at `step` (the median of the `smooth` points ending there), if the history still
  // holds that step; NaN otherwise.
  double level_at(int64_t step);

 private:
  int smooth_ = 1;
  RingWindow recent_, history_;
  std::vector<double> scratch_;
  double level_ = NaN;
};

std::unique_ptr<Detector> make_level_shift(const DetectorSpec& spec);
std::unique_ptr<Detector> make_controller(const DetectorSpec& spec);
std::unique_ptr<Detector> make_spike(const DetectorSpec& spec);
std::unique_ptr<Detector> make_drift(const DetectorSpec& spec);
std::unique_ptr<Detector> make_co_trend(const DetectorSpec& spec);
std::unique_ptr<Detector> make_flat(const DetectorSpec& spec);
std::unique_ptr<Detector> make_threshold(const DetectorSpec& spec);
std::unique_ptr<Detector> make_zero_variance_groups(const DetectorSpec& spec);
std::unique_ptr<Detector> make_schedule_jump(const DetectorSpec& spec);
std::unique_ptr<Detector> make_heldout_decline(const DetectorSpec& spec);
std::unique_ptr<Detector> make_bound(const DetectorSpec& spec);
std::unique_ptr<Detector> make_steady_trend(const DetectorSpec& spec);
std::unique_ptr<Detector> make_stall(const DetectorSpec& spec);
std::unique_ptr<Detector> make_drawdown(const DetectorSpec& spec);
std::unique_ptr<Detector> make_rebound(const DetectorSpec& spec);
std::unique_ptr<Detector> make_constant(const DetectorSpec& spec);
std::unique_ptr<Detector> make_floor(const DetectorSpec& spec);
std::unique_ptr<Detector> make_ceiling(const DetectorSpec& spec);
std::unique_ptr<Detector> make_at_level(const DetectorSpec& spec);

}  // namespace rldk::detect
