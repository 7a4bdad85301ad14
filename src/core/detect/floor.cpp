// The floor kind: a metric that fell to the lowest level it ever had and sat there, unchanging, until the data
// ended (a reward at its minimum score at every step: every completion fails alike, so no group differs and nothing
// is learned). The drawdown kind judges a drop against the run's gain and against |best|, which a reward on a
// negative scale (-1 for a wrong answer) that never rose does not give; the constant kind asks the whole run to be
// flat, which a run that collapses after a few steps is not. Judged once the data ends, in O(1) memory:
//   - the final stretch: the latest points that all lie in a band of width max(max_spread, relative_spread x
//     |level|), the level being the band's midpoint (a point outside the band starts a new stretch at that point,
//     so the stretch's first point may be one late);
//   - at least min_points points and min_share of the run's points in it;
//   - at the floor: no point before the stretch lies below its top (less one band width);
//   - fallen to it: the median of the min_before or more points before the stretch lies at least min_drop band
//     widths above the stretch's level (a median: a reward at its floor from the first step, with a lucky batch or
//     two, did not fall to it). The points are kept in bounded memory (stats::ThinnedSeries: averages of
//     neighbouring points once a long run outgrows it).
// The onset is the stretch's first point; the episode runs to the last.
#include <algorithm>
#include <cmath>
#include <limits>

#include "detect/kind_support.h"
#include "stats/robust.h"
#include "stats/trend.h"

namespace rldk::detect {
namespace {

constexpr double INF = std::numeric_limits<double>::infinity();

class Floor final : public Detector {
 public:
  explicit Floor(const DetectorSpec& s) : Detector(s) {
    min_points_ = static_cast<int64_t>(std::max(3.0, s.param("min_points", 20)));
    min_share_ = s.param("min_share", 0.2);
    min_before_ = static_cast<int64_t>(std::max(1.0, s.param("min_before", 3)));
    min_drop_ = s.param("min_drop", 5);
    max_spread_ = s.param("max_spread", 0.0);
    relative_spread_ = s.param("relative_spread", 0.0);
  }
  void reset() override {
    finish();
    clear();
  }
  void observe(int64_t step, const double* x) override {
    double v = x[0];
    if (!std::isfinite(v)) return;
    ++points_;
    all_.push(step, v);
    double low = std::min(low_, v), high = std::max(high_, v);
    if (stretch_ > 0 && high - low <= band((low + high) / 2)) {
      low_ = low, high_ = high;
      ++stretch_;
    } else {
      // The stretch so far now lies before the new one.
      before_low_ = std::min(before_low_, low_);
      before_points_ += stretch_;
      low_ = high_ = v;
      stretch_ = 1;
      first_step_ = step;
    }
    last_step_ = step;
  }
  void finish() override {
    if (stretch_ >= min_points_ && static_cast<double>(stretch_) >= min_share_ * static_cast<double>(points_) &&
        before_points_ >= min_before_) {
      double level = (low_ + high_) / 2, width = band(level);
      before_.clear();
      auto steps = all_.steps();
      auto values = all_.values();
      for (size_t i = 0; i < values.size() && steps[i] < first_step_; ++i) before_.push_back(values[i]);
      double before = before_.empty() ? NaN : stats::median_in_place(before_);
      bool at_floor = before_low_ >= high_ - width;
      bool fallen = std::isfinite(before) && before - level >= min_drop_ * width;
      if (at_floor && fallen) {
        alarm(last_step_);
        report(first_step_, last_step_, first_step_, level,
               {{"level", level}, {"low", low_}, {"high", high_}, {"before", before},
                {"points", static_cast<double>(stretch_)}, {"of", static_cast<double>(points_)}});
      }
    }
    clear();
  }

 private:
  double band(double level) const { return std::max(max_spread_, relative_spread_ * std::fabs(level)); }
  void clear() {
    points_ = stretch_ = before_points_ = 0;
    low_ = before_low_ = INF;
    high_ = -INF;
    all_.reset();
  }

  int64_t min_points_, min_before_;
  double min_share_, min_drop_, max_spread_, relative_spread_;
  int64_t points_ = 0, stretch_ = 0, before_points_ = 0, first_step_ = 0, last_step_ = 0;
  double low_ = INF, high_ = -INF;
  double before_low_ = INF;
  stats::ThinnedSeries all_{512};  // every point, for the median before the stretch
  std::vector<double> before_;
};

}  // namespace

std::unique_ptr<Detector> make_floor(const DetectorSpec& spec) { return std::make_unique<Floor>(spec); }

}  // namespace rldk::detect
