// The constant kind: a metric that never varied over the whole run. The other kinds judge changes against a level
// the run had; a reward that is the same at every logged step (a reward function that returns its format penalty
// or 0 for everything, a parser that never matches) has no change to find, and the run learns nothing from it.
// Judged once the data ends, in O(1) memory: at least min_points finite points, and every one of them inside a band
// of width max(max_spread, relative_spread x |level|), where the level is the midpoint of the band. A single step
// outside it means the metric did vary there. The onset is the first point; the episode runs to the last.
// Live, with alarm_points > 0, the alarm comes at that point when every point so far is inside the band (a DPO margin
// of exactly 0 over 10 steps: a monitor told only when the run ends would have let it run to its end); the scan still
// reports only a metric constant to the end. With 0 the alarm waits for the end (a reward flat over its first 20
// steps may still be a slow start).
#include <algorithm>
#include <cmath>
#include <limits>

#include "detect/kind_support.h"

namespace rldk::detect {
namespace {

class Constant final : public Detector {
 public:
  explicit Constant(const DetectorSpec& s) : Detector(s) {
    min_points_ = static_cast<int64_t>(std::max(3.0, s.param("min_points", 20)));
    max_spread_ = s.param("max_spread", 0.0);
    relative_spread_ = s.param("relative_spread", 0.0);
    alarm_points_ = static_cast<int64_t>(s.param("alarm_points", 0));
  }
  void reset() override {
    finish();
    points_ = 0;
    low_ = std::numeric_limits<double>::infinity();
    high_ = -std::numeric_limits<double>::infinity();
  }
  void observe(int64_t step, const double* x) override {
    double v = x[0];
    if (!std::isfinite(v)) return;
    if (points_ == 0) first_step_ = step;
    last_step_ = step;
    low_ = std::min(low_, v);
    high_ = std::max(high_, v);
    ++points_;
    if (alarm_points_ > 0 && points_ == std::max(alarm_points_, min_points_) && inside_band()) {
      alarm(step);
      alarmed_ = true;
    }
  }
  void finish() override {
    if (points_ < min_points_) {
      points_ = 0;
      return;
    }
    double level = (low_ + high_) / 2, spread = high_ - low_;
    if (inside_band()) {
      if (!alarmed_) alarm(last_step_);
      report(first_step_, last_step_, first_step_, level,
             {{"level", level}, {"low", low_}, {"high", high_}, {"spread", spread},
              {"points", static_cast<double>(points_)}});
    }
    points_ = 0;
    alarmed_ = false;
  }

 private:
  bool inside_band() const {
    return high_ - low_ <= std::max(max_spread_, relative_spread_ * std::fabs((low_ + high_) / 2));
  }
  int64_t min_points_, alarm_points_;
  double max_spread_, relative_spread_;
  int64_t points_ = 0, first_step_ = 0, last_step_ = 0;
  bool alarmed_ = false;  // raised live at the min_points-th point
  double low_ = std::numeric_limits<double>::infinity(), high_ = -std::numeric_limits<double>::infinity();
};

}  // namespace

std::unique_ptr<Detector> make_constant(const DetectorSpec& spec) { return std::make_unique<Constant>(spec); }

}  // namespace rldk::detect
