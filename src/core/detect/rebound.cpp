// The rebound kind: a metric that should settle low (a policy's entropy, which RL sharpens) climbs back from the
// lowest level it reached and keeps climbing. The whole-run trend test (steady_trend) misses a rise that starts
// mid-run after the usual early decline: the run's last fifth never gets far above its first. Judged against the
// run's own lowest level, on a log scale (entropy noise is multiplicative):
//   - the level is the median of the last `smooth` points (one odd batch is not a rise);
//   - a point is up when the level is at least min_ratio times the lowest level so far, the rise is at least
//     min_sigma times the point-to-point noise of the recent points (stats::difference_noise), and the level rose
//     by at least min_rise in the metric's own units (an entropy that climbs from 0.021 to 0.033 nats per token
//     changes the sampling distribution's effective number of choices per token, e^H, by about 1 %: a ratio
//     alone reads that as a rebound);
//   - min_points consecutive up points (max_gap quiet points allowed) make an episode, and so do the last 3 or more
//     when the data ends during the climb. Its onset is where the climb from the lowest level began
//     (stats::ramp_start over the points since the lowest one).
#include <algorithm>
#include <cmath>

#include "detect/kind_support.h"

namespace rldk::detect {
namespace {

class Rebound final : public Detector {
 public:
  explicit Rebound(const DetectorSpec& s) : Detector(s) {
    log_min_ratio_ = std::log(std::max(1.0, s.param("min_ratio", 1.5)));
    min_sigma_ = s.param("min_sigma", 4.0);
    min_rise_ = s.param("min_rise", 0.0);
    min_points_ = static_cast<int64_t>(s.param("min_points", 5));
    sustained_.configure(min_points_, static_cast<int64_t>(s.param("max_gap", 1)));
    level_.configure(static_cast<int>(s.param("smooth", 5)), static_cast<int>(s.param("history", 64)));
  }
  void reset() override {
    finish();
    level_.reset();
    have_low_ = false;
  }
  void observe(int64_t step, const double* x) override {
    // Working units are logs: a zero or negative value has no place on this scale and is skipped.
    if (!(x[0] > 0) || !std::isfinite(x[0])) return;
    if (!level_.push(std::log(x[0]), step)) return;
    double level = level_.level();
    if (!have_low_ || level < low_) {
      have_low_ = true;
      low_ = level;
      low_step_ = step;
    }
    double rise = level - low_;
    bool up = rise >= log_min_ratio_ && std::exp(level) - std::exp(low_) >= min_rise_ &&
              rise >= min_sigma_ * level_.noise();
    // The climb began after the lowest level: a hinge fit over the points since then dates where it took off.
    if (up && !sustained_.episode().open) onset_ = level_.onset_after(low_step_, 1.0);
    if (sustained_.feed(step, up, x[0], rise)) emit();
    if (sustained_.confirmed()) alarm(step);
    if (up) low_at_rise_ = low_;
  }
  // Data that ends while the level is still climbing (a run stopped or crashed mid-rise, a short run, or a segment
  // that a restart ends) has no later points to complete min_points with: a climb up at each of its last END_POINTS
  // points or more is reported as it stands, and raised then (a live monitor sees the end of the data too).
  void finish() override {
    const Episode& e = sustained_.episode();
    bool under_way = e.open && e.quiet_points == 0 && e.points >= END_POINTS && e.points < min_points_;
    if (under_way) alarm(e.end);
    if (sustained_.close() || under_way) emit();
  }

 private:
  void emit() {
    const Episode& e = sustained_.episode();
    double lowest = std::exp(low_at_rise_);
    report(onset_, e.end, e.peak_step, e.peak_value,
           {{"lowest", lowest},
            {"level", e.mean()},
            {"ratio", lowest > 0 ? e.peak_value / lowest : NaN},
            {"points", static_cast<double>(e.points)}});
  }
  static constexpr int64_t END_POINTS = 3;
  int64_t min_points_ = 5;
  double log_min_ratio_, min_sigma_, min_rise_;
  Sustained sustained_;
  SmoothedLevel level_;
  bool have_low_ = false;
  double low_ = 0, low_at_rise_ = 0;
  int64_t low_step_ = 0, onset_ = 0;
};

}  // namespace

std::unique_ptr<Detector> make_rebound(const DetectorSpec& spec) { return std::make_unique<Rebound>(spec); }

}  // namespace rldk::detect
