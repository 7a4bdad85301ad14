// The steady_trend kind: a metric drifting the whole run in one direction, from its first logged values. Shifts
// against a learned baseline miss this shape: there is no quiet stretch to learn from, and every point is only a
// little beyond the one before. Judged once the data ends, on the whole run kept in bounded memory
// (stats::ThinnedSeries):
//   - a Mann-Kendall trend score |Z| of at least min_z in the watched direction (no noise model, no warm-up);
//   - the median of the last edge_fraction of the run against the median of the first: a rise to at least
//     (1 + min_relative_change) times the start, or a fall to at most (1 - min_relative_change) of it;
//     with `compare: magnitude`, for a metric whose sign may change (a loss unbounded below), the end at least
//     (1 + min_relative_change) times as far from zero as the start, or than min_scale when the start is nearer
//     zero than that, on the side the trend heads to: a loss running away, whichever sign it started with.
//   - optionally (min_late_share, min_end), a drift that keeps its pace: the move from the middle of the run to its
//     end at least min_late_share of the whole move, and the end past min_end. A healthy KL rises from 0 and levels
//     off; a drifting one goes on rising as fast.
// The onset is where the drift began (stats::ramp_start_levelling over the thinned run: a drift may level off before
// the run ends), fitted on the metric's own scale (the trend score, made of ranks, is the same on any). A KL is 0
// where the policy equals its reference, so on a log scale its first points climb by nats (0.007 -> 0.05 in the first
// hundred steps of a healthy run) and the fit dates a drift that began at step 260 at the run's start; on its own
// scale that approach is a small step and the drift is the change. The episode runs to the last point.
// With `live: so_far`, the same test is applied to the points so far, each time they have grown by a sixteenth (a
// loss running from 2 to -100 by step 170 of 1,000 is a runaway then, not only when the run ends): the alarm comes
// at the first point where the run, had it ended there, would have been reported (and, with the catalog's own
// `levels`, reported as a warning: its furthest point past the warning level); the scan keeps that step as the
// finding's alarm when the whole run is reported too. Only for a drift that is a failure wherever it stops (a loss
// ten times as far from zero, a preference loss a quarter above its start): memory that climbs through a warm-up
// and then holds, or a length that doubles in the first steps and settles, pass the test on their first points and
// not on the whole run, so those detectors judge the whole run (`live: end`, the default). The trend score,
// quadratic in the kept points, is computed only when the start and end levels are already far enough apart.
#include <algorithm>
#include <cmath>
#include <span>

#include "detect/kind_support.h"
#include "stats/change_point.h"
#include "stats/robust.h"
#include "stats/trend.h"

namespace rldk::detect {
namespace {

class SteadyTrend final : public Detector {
 public:
  explicit SteadyTrend(const DetectorSpec& s)
      : Detector(s), series_(static_cast<size_t>(std::max(16.0, s.param("capacity", 512)))) {
    sign_ = direction_sign(s);
    min_points_ = static_cast<size_t>(std::max(3.0, s.param("min_points", 20)));
    min_z_ = s.param("min_z", 3.0);
    min_relative_change_ = s.param("min_relative_change", 1.0);
    min_scale_ = s.param("min_scale", 0.0);
    magnitude_ = s.option("compare", "ratio") == "magnitude";
    edge_fraction_ = std::clamp(s.param("edge_fraction", 0.2), 0.05, 0.5);
    min_late_share_ = s.param("min_late_share", 0.0);
    min_end_ = s.param("min_end", 0.0);
    live_so_far_ = s.option("live", "end") == "so_far";
  }
  void reset() override {
    finish();
    series_.reset();
    furthest_ = NaN;
  }
  void observe(int64_t step, const double* x) override {
    if (!std::isfinite(x[0])) return;
    series_.push(step, x[0]);
    furthest_ = std::isnan(furthest_) ? x[0] : (sign_ < 0 ? std::min(furthest_, x[0]) : std::max(furthest_, x[0]));
    last_step_ = step;
    size_t raw = series_.raw_points();
    if (!live_so_far_ || alarmed_ || raw < std::max(min_points_, next_check_)) return;
    next_check_ = raw + std::max<size_t>(1, raw / LIVE_CHECK_GROWTH);
    if (judge().found && beyond_own_level()) {
      alarmed_ = true;
      alarm_step_ = step;
      alarm(step);
    }
  }
  // A runaway is dated where the metric left its starting level for good: after the last point still within 5 % of
  // the way from the start to the end. (A flat-then-linear fit dates a run-away that decelerates, as losses do once
  // they are far gone, near the run's start.)
  static size_t departure(std::span<const double> values, double start, double end) {
    double sign = end > start ? 1.0 : -1.0, band = 0.05 * std::fabs(end - start);
    size_t onset = 0;
    for (size_t i = 0; i < values.size(); ++i) {
      if (sign * (values[i] - start) <= band) onset = i + 1;
    }
    return std::min(onset, values.size() - 1);
  }
  void finish() override {
    Verdict v = judge();
    if (v.found) {
      if (!alarmed_) {
        alarm_step_ = last_step_;
        alarm(last_step_);
      }
      auto steps = series_.steps();
      report(steps[v.onset], last_step_, steps[v.peak], series_.values()[v.peak],
             {{"start", v.start}, {"end", v.end}, {"ratio", v.ratio}, {"trend_z", v.z},
              {"points", static_cast<double>(series_.raw_points())},
              {"alarm_step", static_cast<double>(alarm_step_)}});
    }
    series_.reset();
    alarmed_ = false;
    next_check_ = 0;
  }

 private:
  struct Verdict {
    bool found = false;
    size_t onset = 0, peak = 0;  // indices into the kept points
    double start = NaN, end = NaN, ratio = NaN, z = 0;
  };
  // The whole test on the points kept so far: what the scan would report had the run ended at the latest point.
  Verdict judge() const {
    Verdict v;
    auto values = series_.values();
    size_t n = values.size();
    if (series_.raw_points() < min_points_ || n < 3) return v;
    size_t edge = std::max<size_t>(2, static_cast<size_t>(std::lround(edge_fraction_ * static_cast<double>(n))));
    edge = std::min(edge, n / 2);
    std::vector<double> first(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(edge));
    std::vector<double> last(values.end() - static_cast<std::ptrdiff_t>(edge), values.end());
    double start = stats::median_in_place(first), end = stats::median_in_place(last);
    double ratio = start != 0 ? end / start : NaN;
    double mid = NaN;
    if (min_late_share_ > 0) {
      size_t from = n / 2 - std::min(n / 2, edge / 2);
      std::vector<double> middle(values.begin() + static_cast<std::ptrdiff_t>(from),
                                 values.begin() + static_cast<std::ptrdiff_t>(std::min(n, from + edge)));
      mid = stats::median_in_place(middle);
    }
    auto far_enough = [&](int direction) {
      bool far = magnitude_ ? direction * end > 0 && std::fabs(end) >= (1 + min_relative_change_) *
                                                                    std::max(std::fabs(start), min_scale_)
                            : start > 0 && end >= 0 &&
                                  (direction > 0 ? ratio >= 1 + min_relative_change_
                                                 : ratio <= 1 - min_relative_change_);
      // A drift that keeps its pace, for a metric that moves in healthy runs too but levels off (a KL rising from 0
      // as the policy leaves its reference): the second half of the run carries at least min_late_share of the
      // move, and the end has passed min_end.
      if (min_late_share_ > 0) far = far && direction * (end - start) > 0 && (end - mid) / (end - start) >= min_late_share_;
      if (min_end_ > 0) far = far && direction * (end - min_end_) >= 0;
      return far;
    };
    if (!far_enough(1) && !far_enough(-1)) return v;
    stats::MannKendall mk = stats::mann_kendall(values);
    int direction = mk.z > 0 ? 1 : -1;
    if (!(std::fabs(mk.z) >= min_z_ && direction_allows(sign_, mk.z)) || !far_enough(direction)) return v;
    v.found = true;
    v.onset = magnitude_ ? departure(values, start, end)
                         : stats::ramp_start_levelling(values, std::max<size_t>(2, n / 5));
    // The peak is the most extreme kept point in the drift's direction.
    for (size_t i = 1; i < n; ++i) {
      if (direction * (values[i] - values[v.peak]) > 0) v.peak = i;
    }
    v.start = start;
    v.end = end;
    v.ratio = ratio;
    v.z = mk.z;
    return v;
  }
  // With the catalog's own `levels`, a drift whose furthest point is still inside the warning level would be a note
  // (apply_healthy_range judges a steady trend by its peak): live, it alarms once the points so far pass the level.
  bool beyond_own_level() const {
    if (std::isnan(spec_.level_warning)) return true;
    return sign_ < 0 ? furthest_ < spec_.level_warning : furthest_ > spec_.level_warning;
  }
  // Live checks come each time the points so far have grown by this share (1/16).
  static constexpr size_t LIVE_CHECK_GROWTH = 16;
  stats::ThinnedSeries series_;
  int sign_ = 0;
  size_t min_points_;
  double min_z_, min_relative_change_, min_scale_, edge_fraction_, min_late_share_, min_end_;
  bool magnitude_ = false, live_so_far_ = false;
  int64_t last_step_ = 0, alarm_step_ = 0;
  bool alarmed_ = false;   // raised live for this segment
  double furthest_ = NaN;  // the furthest point in the watched direction (the largest for `both`)
  size_t next_check_ = 0;  // the point count of the next live check
};

}  // namespace

std::unique_ptr<Detector> make_steady_trend(const DetectorSpec& spec) {
  return std::make_unique<SteadyTrend>(spec);
}

}  // namespace rldk::detect
