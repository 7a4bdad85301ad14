// The spike kind: short excursions beyond a robust z threshold.
#include <algorithm>
#include <cmath>
#include <map>

#include "detect/kind_support.h"

namespace rldk::detect {
namespace {

// ------------------------------------------------------------------------------------------------ spike
// Robust z against the adaptive reference; a spike is a run of min_points to max_points points beyond the
// threshold (min_points > 1 trades single-point spikes for fewer alarms on heavy-tailed noise). Runs longer than
// max_points are level shifts (their own detector), not spikes, and are not reported here.
//
// Before the warm-up is complete (a run's first logged points, all of a short run's warm-up) a spike can still be
// judged: with early_min_change > 0, once EARLY_POINTS values are in the warm-up (two: a GRPO run whose gradient
// norm is 0 at most logged steps can spike after only two nonzero norms), a point at least early_min_change (working
// units: a ratio on a log scale, set from what the metric is known to do, e.g. 5x for a KL) and `threshold` robust
// sigmas beyond the median of the warm-up values so far is a spike candidate and is kept out of the warm-up. A run
// of such points longer than max_points is a level the metric moved to (a GRPO KL leaving zero), not a spike: the
// warm-up starts again there.
class Spike final : public Detector {
 public:
  explicit Spike(const DetectorSpec& s) : Detector(s) {
    ref_.configure(static_cast<int>(s.param("warmup", 50)), s.param("adapt_rate", 0.02),
                   s.param("min_relative_scale", 0.0), s.param("min_scale", 1e-12), s.param("trend_rate", 0.0));
    threshold_ = s.param("threshold", 6.0);
    min_points_ = static_cast<int64_t>(s.param("min_points", 1));
    max_points_ = static_cast<int64_t>(s.param("max_points", 10));
    min_change_ = s.param("min_change", 0.0);
    early_min_change_ = s.param("early_min_change", 0.0);
    sign_ = direction_sign(s);
    log_ = s.option("transform", "none") == "log";
  }
  void reset() override {
    finish();
    ref_.reset();
  }
  void observe(int64_t step, const double* x) override {
    double raw = x[0];
    // On a log scale a zero is not a spike candidate: it would drag the reference to the log floor.
    if (log_ && !(raw > 0)) return;
    double v = transformed(log_, raw);
    if (std::isnan(v)) return;
    if (!ref_.armed()) {
      if (early_min_change_ > 0 && ref_.warmed() >= EARLY_POINTS && observe_early(step, raw, v)) return;
      if (episode_.open) close(false);
      ref_.warm_up(v);
      return;
    }
    double z = ref_.z(v);
    bool anomalous = std::fabs(z) >= threshold_ && direction_allows(sign_, z) &&
                     std::fabs(v - ref_.forecast()) >= min_change_;
    if (anomalous) {
      if (!episode_.open) {
        episode_.begin(step);
        baseline_ = ref_.forecast();
        scale_ = ref_.scale();
      }
      episode_.add(step, raw, std::fabs(z));
      ref_.advance();
      return;
    }
    if (episode_.open) close(false);
    ref_.learn(v);
  }
  void finish() override { close(true); }

 private:
  // A point judged against the provisional reference of the warm-up so far; true when it is a spike candidate (it
  // then stays out of the warm-up).
  bool observe_early(int64_t step, double raw, double v) {
    double level = 0, sigma = 0;
    ref_.provisional(scratch_, level, sigma);
    // Both the known-to-be-large ratio and the usual threshold in the warm-up's own robust sigmas: a metric whose
    // values are numerical noise (an approx_kl of 1e-6) moves by large ratios without standing out of its noise.
    double z = 0;
    if (!early_departure(v - level, sigma, early_min_change_, threshold_, sign_, z)) return false;
    if (!episode_.open) {
      episode_.begin(step);
      baseline_ = level;
      scale_ = sigma;
    }
    episode_.add(step, raw, std::fabs(z));
    if (episode_.points > max_points_) {
      // Not a spike: the metric moved to a new level. Learn it afresh from here.
      episode_.open = false;
      ref_.reset();
    }
    return true;
  }
  // A spike closes when a point comes back inside the threshold, or when the data (or a segment, before a restart)
  // ends: then it has not come back, and may be where a lasting change begins.
  void close(bool data_ended) {
    if (!episode_.open) return;
    episode_.open = false;
    if (episode_.points > max_points_ || episode_.points < min_points_) return;
    alarm(episode_.end);
    double base = log_ ? std::exp(baseline_) : baseline_;
    std::map<std::string, double> evidence = {{"baseline", base},
                                              {"peak_z", episode_.peak_score},
                                              {"ratio", base != 0 ? episode_.peak_value / base : NaN},
                                              {"points", static_cast<double>(episode_.points)}};
    if (data_ended) evidence["open_at_end"] = 1;
    report(episode_.onset, episode_.end, episode_.peak_step, episode_.peak_value, std::move(evidence));
    findings_.back().explanation += data_ended
                                        ? " It had not come back when the data ended, so it may be where a lasting "
                                          "change begins."
                                        : " Then it came back.";
  }
  AdaptiveReference ref_;
  Episode episode_;
  static constexpr int EARLY_POINTS = 2;
  double threshold_, min_change_, early_min_change_;
  std::vector<double> scratch_;
  int64_t min_points_, max_points_;
  int sign_;
  bool log_;
  double baseline_ = 0, scale_ = 1;
};

}  // namespace

std::unique_ptr<Detector> make_spike(const DetectorSpec& spec) { return std::make_unique<Spike>(spec); }

}  // namespace rldk::detect
