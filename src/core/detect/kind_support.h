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
std::unique_ptr<Detector> make_drawdown(const DetectorSpec& spec);
std::unique_ptr<Detector> make_rebound(const DetectorSpec& spec);

}  // namespace rldk::detect
