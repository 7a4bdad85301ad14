// Detector kinds. Each is O(1) per point after its warm-up (the warm-up sorts its values once); none allocates per
// point. Thresholds come from the catalog (data/detectors/*.yaml); the rules in words are in docs/detectors.md.
#include "detect/kinds.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "detect/streaming.h"

namespace rldk::detect {

void median_and_sigma(std::vector<double>& v, double& median, double& sigma) {
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  median = *mid;
  for (double& e : v) e = std::fabs(e - median);
  std::nth_element(v.begin(), mid, v.end());
  sigma = MAD_TO_SIGMA * *mid;
}

double difference_noise(std::vector<double>& v) {
  if (v.size() < 3) return 0;
  for (size_t i = 0; i + 1 < v.size(); ++i) v[i] = v[i + 1] - v[i];
  v.pop_back();
  double median = 0, sigma = 0;
  median_and_sigma(v, median, sigma);
  return sigma / std::sqrt(2.0);
}

namespace {

const std::map<std::string, std::vector<std::string>>& parameter_table() {
  static const std::map<std::string, std::vector<std::string>> table = {
      {"level_shift", {"warmup", "adapt_rate", "trend_rate", "min_relative_scale", "min_scale", "k", "h", "z_clip",
                       "freeze_fraction", "min_points", "min_change", "rearm_after"}},
      {"spike", {"warmup", "adapt_rate", "trend_rate", "min_relative_scale", "min_scale", "threshold", "min_points",
                 "max_points", "min_change"}},
      {"drift", {"reference_skip", "reference_points", "window", "min_relative_change", "min_sigma", "min_points"}},
      {"threshold", {"min_points", "max_gap"}},
      {"controller", {"warmup", "adapt_rate", "trend_rate", "min_relative_scale", "min_scale", "k", "h", "z_clip",
                      "freeze_fraction", "min_points", "min_change", "rearm_after", "coef_min_relative_change"}},
      {"co_trend", {"reference_points", "window", "proxy_min_sigma", "other_min_relative_change", "other_min_sigma",
                    "min_points"}},
      {"flat", {"reference_points", "window", "flat_ratio", "min_move_sigma", "min_scale", "min_points"}},
      {"heldout_decline", {"proxy_reference_points", "proxy_rate", "min_evals", "heldout_min_drop_sigma",
                           "proxy_min_rise_sigma", "min_points"}},
      {"zero_variance_groups", {"group_size", "margin", "fallback_threshold", "min_points"}},
      {"schedule_jump", {"jump_fraction", "smooth_window", "smooth_fraction"}},
      {"non_finite", {}},
  };
  return table;
}

constexpr double LOG_FLOOR = 1e-12;
// Smoothing rate of the level a level shift reaches (an exponentially weighted mean over its episode).
constexpr double LEVEL_SMOOTHING = 0.2;
const std::vector<std::string> DIRECTIONS = {"up", "down", "both"};
const std::vector<std::string> TRANSFORMS = {"none", "log"};

// Per-point direction test: +1 up, -1 down, 0 both.
int direction_sign(const DetectorSpec& spec, const char* name = "direction") {
  std::string d = spec.option(name, "both");
  return d == "up" ? 1 : d == "down" ? -1 : 0;
}

bool direction_allows(int sign, double deviation) {
  return sign == 0 || (sign > 0 && deviation > 0) || (sign < 0 && deviation < 0);
}

// Value in the detector's working units; NaN to skip the point (non-finite values have their own detector).
double transformed(bool log_scale, double x) {
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
    if (anomalous) {
      if (!episode_.open) episode_.begin(step);
      episode_.add(step, value, score);
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

 private:
  Episode episode_;
  int64_t min_points_ = 1, max_gap_ = 0;
};

// ------------------------------------------------------------------------------------------------ level_shift
// CUSUM on values standardised by an adaptive robust reference. The reference learns only while both CUSUM sides
// are below freeze_fraction x h, so a starting shift is not absorbed; z is clipped to +-z_clip so one wild point
// cannot cross h alone (that is a spike, another detector). After an alarm the side keeps accumulating (capped at
// 2h) and the episode lasts until it returns to zero: a shift that persists is one finding to the end of the run.
class LevelShift : public Detector {
 public:
  explicit LevelShift(const DetectorSpec& s) : Detector(s) {
    ref_.configure(static_cast<int>(s.param("warmup", 50)), s.param("adapt_rate", 0.02),
                   s.param("min_relative_scale", 0.0), s.param("min_scale", 1e-12), s.param("trend_rate", 0.0));
    k_ = s.param("k", 1.0);
    h_ = s.param("h", 10.0);
    z_clip_ = s.param("z_clip", 4.0);
    freeze_ = s.param("freeze_fraction", 0.3) * h_;
    min_points_ = static_cast<int64_t>(s.param("min_points", 1));
    min_change_ = s.param("min_change", 0.0);
    rearm_after_ = static_cast<int64_t>(s.param("rearm_after", 0));
    sign_ = direction_sign(s);
    log_ = s.option("transform", "none") == "log";
    lookback_.configure(LOOKBACK);
    episode_z_.reserve(EPISODE_Z_CAP);
  }
  void reset() override {
    finish();
    ref_.reset();
    cusum_.reset();
    lookback_.reset();
    side_ = 0;
  }
  void observe(int64_t step, const double* x) override {
    double raw = x[0];
    double v = transformed(log_, raw);
    if (std::isnan(v)) return;
    if (pending_) follow_pending(step, v);
    if (!ref_.armed()) {
      ref_.warm_up(v);
      return;
    }
    before_update(x);
    double raw_z = ref_.z(v);
    double z = std::clamp(raw_z, -z_clip_, z_clip_);
    cusum_.update(z, k_, step);
    // The onset refinement reads unclipped z: the clip that keeps one wild point from alarming would also hide how
    // much larger the points after a change are than the noise before it.
    double onset_z = std::clamp(raw_z, -ONSET_Z_LIMIT, ONSET_Z_LIMIT);
    if (side_ == 0) {
      lookback_.push(onset_z, step);
    } else if (static_cast<size_t>(episode_z_.size()) < EPISODE_Z_CAP) {
      episode_z_.push_back(onset_z);
    }
    if (side_ == 0) {
      bool up = cusum_.up > h_ && sign_ >= 0, down = cusum_.down > h_ && sign_ <= 0;
      if (up || down) {
        emit_pending();
        side_ = up ? 1 : -1;
        episode_.begin(side_ > 0 ? cusum_.up_start : cusum_.down_start);
        episode_z_.clear();
        reached_ = 0;
        baseline_ = ref_.forecast();
        scale_ = ref_.scale();
        alarm_step_ = step;
        ref_.advance();
      } else if (!accumulating() && std::fabs(raw_z) < z_clip_) {
        // Points beyond the clip do not teach the reference: the first points of a shift would inflate its scale.
        ref_.learn(v);
      } else {
        ref_.advance();
      }
    } else {
      ref_.advance();
    }
    if (side_ != 0) {
      double& stat = side_ > 0 ? cusum_.up : cusum_.down;
      stat = std::min(stat, 2 * h_);
      if (stat <= 0) {
        close();
        cusum_.reset();
        return;
      }
      episode_.add(step, raw, side_ * (v - baseline_));
      smoothed_ = episode_.points == 1 ? v : smoothed_ + LEVEL_SMOOTHING * (v - smoothed_);
      // Counted once the shift has lasted min_points: a level held, not the echo of one wild point.
      if (episode_.points >= min_points_) reached_ = std::max(reached_, side_ * (smoothed_ - baseline_));
      if (rearm_after_ > 0 && episode_.points >= rearm_after_) {
        // Judged on rearm_after points. A confirmed shift: the level reached is the metric's new normal, learned
        // afresh, so a later change is a finding of its own instead of disappearing inside this one. A rejected
        // one: the forecast is moved to where the metric is now and keeps its slope and scale, with no blind
        // warm-up in which a real change could pass unseen.
        double now = smoothed_;
        bool pending_before = pending_;
        close();
        cusum_.reset();
        lookback_.reset();
        if (pending_ && !pending_before) {
          ref_.reset();
        } else {
          ref_.reanchor(now);
        }
      }
    }
  }
  void finish() override {
    close();
    emit_pending();
  }

 protected:
  // Hooks for kinds that add a condition on other inputs: called with each scored point's inputs before the CUSUM
  // update, and with an episode that passed every shift test (false drops it; it may add evidence).
  virtual void before_update(const double* /*x*/) {}
  virtual bool confirm(std::map<std::string, double>& /*evidence*/) { return true; }
  // True at a point where the watched CUSUM side could still date a change's start (it is within k of zero).
  bool change_may_start_here() const {
    return side_ == 0 && ((sign_ >= 0 && cusum_.up <= k_) || (sign_ <= 0 && cusum_.down <= k_));
  }

 private:
  // A change is building up on a side this detector watches. The other side does not freeze the reference: a
  // forecast that overshoots a flattening trend must be corrected, not kept.
  bool accumulating() const {
    return (sign_ >= 0 && cusum_.up >= freeze_) || (sign_ <= 0 && cusum_.down >= freeze_);
  }
  void close() {
    if (side_ == 0) return;
    episode_side_ = side_;
    side_ = 0;
    refine_onset();
    // The change is how far the smoothed level got from the baseline (working units): a slow approach to a new
    // level, or a shift that later recovers, is judged on the level it reached, not on the episode's average.
    double change = reached_;
    double base = log_ ? std::exp(baseline_) : baseline_;
    double level_v = baseline_ + episode_side_ * change;
    double level = log_ ? std::exp(level_v) : level_v;
    if (episode_.points < min_points_ || change < min_change_) return;
    double sigma = scale_;
    // CUSUM also crosses h when noise drifts by about k for long enough; an episode whose level moved less than
    // 2k reference sigmas is that, not a shift of the size the detector is tuned for (2 sigma and more).
    if (change / sigma < 2 * k_) return;
    std::map<std::string, double> evidence = {{"baseline", base},
                                              {"level", level},
                                              {"shift_sigma", episode_side_ * change / sigma},
                                              {"ratio", base != 0 ? level / base : NaN},
                                              {"alarm_step", static_cast<double>(alarm_step_)},
                                              {"points", static_cast<double>(episode_.points)}};
    if (!confirm(evidence)) return;
    if (rearm_after_ <= 0) {
      report(episode_.onset, episode_.end, episode_.peak_step, episode_.peak_value, std::move(evidence));
      return;
    }
    // Re-armed: the finding waits while the metric stays at least half-way to the level it reached, so its end
    // step says how long the shift lasted, not when it was judged.
    pending_ = true;
    pending_episode_ = episode_;
    pending_evidence_ = std::move(evidence);
    tail_base_ = baseline_;
    tail_side_ = episode_side_;
    tail_threshold_ = change / 2;
    tail_smoothed_ = smoothed_;
  }
  // The CUSUM's change time is where the side last left zero; noise that kept it above zero before the change
  // dates it too early. With the points after the alarm in hand, the onset is re-estimated as the maximum-likelihood
  // change point of a mean shift in z: the candidate t in [CUSUM start, alarm] maximising S(t)^2 / n(t), where S(t)
  // is the sum of z from t to the last point seen and n(t) the number of those points.
  void refine_onset() {
    int count = lookback_.size();
    double suffix = 0;
    for (double z : episode_z_) suffix += z;
    int64_t after = static_cast<int64_t>(episode_z_.size());
    double best = -1;
    int64_t best_step = episode_.onset;
    for (int i = count - 1; i >= 0; --i) {
      int64_t step = lookback_.step_from_oldest(i);
      if (step < episode_.onset) break;
      suffix += lookback_.at_from_oldest(i);
      ++after;
      double signed_sum = episode_side_ * suffix;
      double stat = signed_sum > 0 ? signed_sum * signed_sum / static_cast<double>(after) : 0;
      if (stat > best) {
        best = stat;
        best_step = step;
      }
    }
    episode_.onset = best_step;
  }
  void follow_pending(int64_t step, double v) {
    tail_smoothed_ += LEVEL_SMOOTHING * (v - tail_smoothed_);
    if (tail_side_ * (tail_smoothed_ - tail_base_) >= tail_threshold_) {
      pending_episode_.end = step;
    } else {
      emit_pending();
    }
  }
  void emit_pending() {
    if (!pending_) return;
    pending_ = false;
    report(pending_episode_.onset, pending_episode_.end, pending_episode_.peak_step, pending_episode_.peak_value,
           std::move(pending_evidence_));
  }
  AdaptiveReference ref_;
  Cusum cusum_;
  Episode episode_;
  double k_, h_, z_clip_, freeze_, min_change_;
  int64_t min_points_, rearm_after_;
  int sign_;
  bool log_;
  int side_ = 0, episode_side_ = 0;
  double baseline_ = 0, scale_ = 1, smoothed_ = 0, reached_ = 0;
  // z of the last LOOKBACK points before an alarm and of the episode's first EPISODE_Z_CAP points, for the onset.
  static constexpr int LOOKBACK = 128;
  static constexpr size_t EPISODE_Z_CAP = 256;
  static constexpr double ONSET_Z_LIMIT = 1e3;
  RingWindow lookback_;
  std::vector<double> episode_z_;
  // A judged finding of a re-armed detector, held while the shift lasts.
  bool pending_ = false;
  Episode pending_episode_;
  std::map<std::string, double> pending_evidence_;
  int tail_side_ = 0;
  double tail_base_ = 0, tail_threshold_ = 0, tail_smoothed_ = 0;
  int64_t alarm_step_ = 0;
};

// ------------------------------------------------------------------------------------------------ spike
// Robust z against the adaptive reference; a spike is a run of min_points to max_points points beyond the
// threshold (min_points > 1 trades single-point spikes for fewer alarms on heavy-tailed noise). Runs longer than
// max_points are level shifts (their own detector), not spikes, and are not reported here.
class Spike final : public Detector {
 public:
  explicit Spike(const DetectorSpec& s) : Detector(s) {
    ref_.configure(static_cast<int>(s.param("warmup", 50)), s.param("adapt_rate", 0.02),
                   s.param("min_relative_scale", 0.0), s.param("min_scale", 1e-12), s.param("trend_rate", 0.0));
    threshold_ = s.param("threshold", 6.0);
    min_points_ = static_cast<int64_t>(s.param("min_points", 1));
    max_points_ = static_cast<int64_t>(s.param("max_points", 10));
    min_change_ = s.param("min_change", 0.0);
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
    if (episode_.open) close();
    ref_.learn(v);
  }
  void finish() override { close(); }

 private:
  void close() {
    if (!episode_.open) return;
    episode_.open = false;
    if (episode_.points > max_points_ || episode_.points < min_points_) return;
    double base = log_ ? std::exp(baseline_) : baseline_;
    report(episode_.onset, episode_.end, episode_.peak_step, episode_.peak_value,
           {{"baseline", base},
            {"peak_z", episode_.peak_score},
            {"ratio", base != 0 ? episode_.peak_value / base : NaN},
            {"points", static_cast<double>(episode_.points)}});
  }
  AdaptiveReference ref_;
  Episode episode_;
  double threshold_, min_change_;
  int64_t min_points_, max_points_;
  int sign_;
  bool log_;
  double baseline_ = 0, scale_ = 1;
};

// ------------------------------------------------------------------------------------------------ drift
// Trailing-window mean against an early reference window (after reference_skip points). A drift must exceed both a
// relative change of the reference level and min_sigma reference standard deviations (robust), for min_points
// points. The onset reported is the step in the middle of the trailing window when the condition first held:
// the window's mean crosses the threshold about when half of it has moved.
class Drift final : public Detector {
 public:
  explicit Drift(const DetectorSpec& s) : Detector(s) {
    skip_ = static_cast<int64_t>(s.param("reference_skip", 0));
    ref_points_ = static_cast<size_t>(std::max(3.0, s.param("reference_points", 100)));
    window_.configure(static_cast<int>(s.param("window", 50)));
    min_rel_ = s.param("min_relative_change", 0.5);
    min_sigma_ = s.param("min_sigma", 3.0);
    sustained_.configure(static_cast<int64_t>(s.param("min_points", 10)), 0);
    sign_ = direction_sign(s);
    reference_.reserve(ref_points_);
  }
  void reset() override {
    finish();
    seen_ = 0;
    reference_.clear();
    armed_ = false;
    window_.reset();
  }
  void observe(int64_t step, const double* x) override {
    double v = x[0];
    if (!std::isfinite(v)) return;
    if (seen_++ < skip_) return;
    if (!armed_) {
      reference_.push_back(v);
      if (reference_.size() == ref_points_) {
        double sum = 0;
        for (double e : reference_) sum += e;
        ref_mean_ = sum / static_cast<double>(reference_.size());
        median_and_sigma(reference_, ref_median_, ref_sigma_);
        armed_ = true;
        reference_.clear();
      }
      return;
    }
    window_.push(v, step);
    if (!window_.full()) return;
    double m = window_.mean();
    double change = m - ref_mean_;
    double rel = ref_mean_ != 0 ? change / std::fabs(ref_mean_) : (change != 0 ? INFINITY * change : 0);
    bool anomalous = direction_allows(sign_, change) && std::fabs(rel) >= min_rel_ &&
                     std::fabs(change) >= min_sigma_ * ref_sigma_;
    if (anomalous && !sustained_.episode().open) onset_ = window_.step_from_oldest(window_.capacity() / 2);
    if (sustained_.feed(step, anomalous, m, std::fabs(change))) emit();
  }
  void finish() override {
    if (sustained_.close()) emit();
  }

 private:
  void emit() {
    const Episode& e = sustained_.episode();
    report(onset_, e.end, e.peak_step, e.peak_value,
           {{"reference_mean", ref_mean_},
            {"reference_sigma", ref_sigma_},
            {"window_mean", e.peak_value},
            {"relative_change", ref_mean_ != 0 ? (e.peak_value - ref_mean_) / std::fabs(ref_mean_) : NaN},
            {"change_sigma", ref_sigma_ > 0 ? (e.peak_value - ref_mean_) / ref_sigma_ : NaN},
            {"first_alarm_step", static_cast<double>(e.onset)}});
  }
  int64_t skip_, seen_ = 0;
  size_t ref_points_;
  std::vector<double> reference_;
  bool armed_ = false;
  double ref_mean_ = 0, ref_median_ = 0, ref_sigma_ = 0, min_rel_, min_sigma_;
  RingWindow window_;
  Sustained sustained_;
  int sign_;
  int64_t onset_ = 0;
};

// ------------------------------------------------------------------------------------------------ threshold
// Fixed bounds on one or more inputs at the same step (all conditions must hold), sustained for min_points.
class Threshold final : public Detector {
 public:
  explicit Threshold(const DetectorSpec& s) : Detector(s) {
    sustained_.configure(static_cast<int64_t>(s.param("min_points", 1)), static_cast<int64_t>(s.param("max_gap", 0)));
    for (const auto& c : s.conditions) {
      Bound b{c, 0, -1};
      for (size_t i = 0; i < s.inputs.size(); ++i) {
        if (s.inputs[i].first == c.input) b.input = i;
        if (!c.divide_by.empty() && s.inputs[i].first == c.divide_by) b.divisor = static_cast<std::ptrdiff_t>(i);
      }
      bounds_.push_back(b);
    }
  }
  void reset() override { finish(); }
  void observe(int64_t step, const double* x) override {
    if (!std::isfinite(x[0])) return;
    bool all = !bounds_.empty();
    double first_value = NaN, excess = 0;
    for (size_t i = 0; i < bounds_.size(); ++i) {
      double v = value_of(bounds_[i], x);
      if (i == 0) first_value = v;
      const ThresholdCondition& c = bounds_[i].condition;
      bool hit = std::isfinite(v) && ((c.has_above && v > c.above) || (c.has_below && v < c.below));
      if (i == 0 && hit) excess = c.has_above && v > c.above ? v - c.above : c.below - v;
      all = all && hit;
    }
    if (sustained_.feed(step, all, first_value, excess)) emit();
  }
  void finish() override {
    if (sustained_.close()) emit();
  }

 private:
  struct Bound {
    ThresholdCondition condition;
    size_t input;
    std::ptrdiff_t divisor;
  };
  static double value_of(const Bound& b, const double* x) {
    double v = x[b.input];
    if (b.divisor >= 0) {
      double d = x[b.divisor];
      // Ratios are of scales (norms, standard deviations): a non-positive divisor is not one.
      v = d > 0 && std::isfinite(d) ? v / d : NaN;
    }
    return b.condition.absolute ? std::fabs(v) : v;
  }
  void emit() {
    const Episode& e = sustained_.episode();
    std::map<std::string, double> evidence = {{"points", static_cast<double>(e.points)}, {"mean", e.mean()}};
    const ThresholdCondition& c = bounds_.front().condition;
    if (c.has_above) evidence["above"] = c.above;
    if (c.has_below) evidence["below"] = c.below;
    report(e.onset, e.end, e.peak_step, e.peak_value, std::move(evidence));
  }
  std::vector<Bound> bounds_;
  Sustained sustained_;
};

// ------------------------------------------------------------------------------------------------ controller
// An adaptive KL controller raises its coefficient while KL is above target, and KL follows. The failure: KL shifts
// to a new level (a level_shift on the first input, with all of its parameters) and stays there although the
// coefficient (second input) rose by at least coef_min_relative_change between the shift's onset and the point
// where the episode is judged: the penalty no longer restrains the policy. A fixed coefficient (GRPO's beta, or
// no controller) never rises, so a KL shift alone is the kl_level_shift detector's finding, not this one.
class Controller final : public LevelShift {
 public:
  explicit Controller(const DetectorSpec& s)
      : LevelShift(s), coef_min_change_(s.param("coef_min_relative_change", 0.05)) {}

 protected:
  void before_update(const double* x) override {
    double coef = x[1];
    if (!std::isfinite(coef)) return;
    if (change_may_start_here() || !std::isfinite(coef_start_)) coef_start_ = coef;
    coef_last_ = coef;
  }
  bool confirm(std::map<std::string, double>& evidence) override {
    double rel = coef_start_ > 0 ? coef_last_ / coef_start_ - 1 : NaN;
    if (!(rel >= coef_min_change_)) return false;
    evidence["coef_start"] = coef_start_;
    evidence["coef_end"] = coef_last_;
    evidence["coef_relative_change"] = rel;
    return true;
  }

 private:
  double coef_min_change_;
  double coef_start_ = NaN, coef_last_ = NaN;
};

// Where a ramp starts inside a full window: the index c minimising the squared error of the hinge model
// a + b * max(0, i - c) (flat, then linear), searched over the window but its last 10 points. O(window^2), for the
// one call at the start of an episode.
int hinge_start(const RingWindow& w) {
  int n = w.size(), best_c = n / 2;
  double best_sse = INFINITY;
  for (int c = 0; c + 10 < n; ++c) {
    double su = 0, sx = 0, suu = 0, sux = 0, sxx = 0;
    for (int i = 0; i < n; ++i) {
      double u = std::max(0, i - c), x = w.at_from_oldest(i) - w.at_from_oldest(0);
      su += u, sx += x, suu += u * u, sux += u * x, sxx += x * x;
    }
    double var_u = suu - su * su / n, cov = sux - su * sx / n, var_x = sxx - sx * sx / n;
    double sse = var_u > 0 ? var_x - cov * cov / var_u : var_x;
    if (sse < best_sse) best_sse = sse, best_c = c;
  }
  return best_c;
}

// ------------------------------------------------------------------------------------------------ co_trend
// Two inputs moving together in a bad way over a trailing window: the proxy (first input) rises by at least
// proxy_min_sigma reference sigmas between the older and newer half of the window, while the other input moves in
// other_direction by at least other_min_relative_change of its older-half level (when > 0) or other_min_sigma of
// its reference sigmas. Reference sigmas are difference_noise of the first reference_points values. The onset is
// where the other input's rise began inside the window (hinge_start).
class CoTrend final : public Detector {
 public:
  explicit CoTrend(const DetectorSpec& s) : Detector(s) {
    ref_points_ = static_cast<size_t>(std::max(3.0, s.param("reference_points", 50)));
    int w = static_cast<int>(s.param("window", 100));
    proxy_.configure(w);
    other_.configure(w);
    proxy_sigma_min_ = s.param("proxy_min_sigma", 2.0);
    other_rel_min_ = s.param("other_min_relative_change", 0.0);
    other_sigma_min_ = s.param("other_min_sigma", 0.0);
    sustained_.configure(static_cast<int64_t>(s.param("min_points", 10)), 0);
    other_sign_ = s.option("other_direction", "up") == "up" ? 1 : -1;
  }
  void reset() override {
    finish();
    ref_proxy_.clear();
    ref_other_.clear();
    armed_ = false;
    proxy_.reset();
    other_.reset();
  }
  void observe(int64_t step, const double* x) override {
    double p = x[0], o = x[1];
    if (!std::isfinite(p) || !std::isfinite(o)) return;
    if (!armed_) {
      ref_proxy_.push_back(p);
      ref_other_.push_back(o);
      if (ref_proxy_.size() == ref_points_) {
        // Noise from point-to-point differences: the reference stretch is often already trending (reward rising
        // early in a run), and the spread of the values themselves would count that trend as noise.
        proxy_sigma_ = difference_noise(ref_proxy_);
        other_sigma_ = difference_noise(ref_other_);
        armed_ = proxy_sigma_ > 0;
        ref_proxy_.clear();
        ref_other_.clear();
      }
      return;
    }
    proxy_.push(p, step);
    other_.push(o, step);
    if (!proxy_.full()) return;
    double proxy_z = (proxy_.newer_mean() - proxy_.older_mean()) / proxy_sigma_;
    double other_change = other_.newer_mean() - other_.older_mean();
    double other_rel = other_.older_mean() != 0 ? other_change / std::fabs(other_.older_mean()) : NaN;
    bool other_moved = other_rel_min_ > 0 ? other_sign_ * other_rel >= other_rel_min_
                                           : other_sigma_ > 0 && other_sign_ * other_change / other_sigma_ >= other_sigma_min_;
    bool anomalous = proxy_z >= proxy_sigma_min_ && other_moved;
    if (anomalous && !sustained_.episode().open) {
      onset_ = other_.step_from_oldest(hinge_start(other_));
      last_proxy_z_ = proxy_z;
      last_other_rel_ = other_rel;
      last_other_sigma_ = other_sigma_ > 0 ? other_change / other_sigma_ : NaN;
    }
    if (sustained_.feed(step, anomalous, p, proxy_z)) emit();
  }
  void finish() override {
    if (sustained_.close()) emit();
  }

 private:
  void emit() {
    const Episode& e = sustained_.episode();
    report(onset_, e.end, e.peak_step, e.peak_value,
           {{"proxy_change_sigma", last_proxy_z_},
            {"other_relative_change", last_other_rel_},
            {"other_change_sigma", last_other_sigma_},
            {"peak_proxy_change_sigma", e.peak_score},
            {"first_alarm_step", static_cast<double>(e.onset)}});
  }
  size_t ref_points_;
  std::vector<double> ref_proxy_, ref_other_;
  bool armed_ = false;
  double proxy_sigma_ = 0, other_sigma_ = 0;
  RingWindow proxy_, other_;
  double proxy_sigma_min_, other_rel_min_, other_sigma_min_;
  Sustained sustained_;
  int other_sign_;
  int64_t onset_ = 0;
  double last_proxy_z_ = 0, last_other_rel_ = 0, last_other_sigma_ = 0;
};

// ------------------------------------------------------------------------------------------------ flat
// A metric that stops moving: the trailing window's standard deviation falls below flat_ratio x the reference
// noise, while its mean sits at least min_move_sigma reference noises away from the reference mean (0: anywhere).
// Reference noise is difference_noise of the first reference_points values: a trend during the reference does
// not inflate it. A metric flat from the start is not an episode.
class Flat final : public Detector {
 public:
  explicit Flat(const DetectorSpec& s) : Detector(s) {
    ref_points_ = static_cast<size_t>(std::max(4.0, s.param("reference_points", 100)));
    window_.configure(static_cast<int>(s.param("window", 50)));
    flat_ratio_ = s.param("flat_ratio", 0.1);
    move_sigma_ = s.param("min_move_sigma", 0.0);
    min_scale_ = s.param("min_scale", 1e-12);
    sustained_.configure(static_cast<int64_t>(s.param("min_points", 1)), 0);
    sign_ = direction_sign(s);
  }
  void reset() override {
    finish();
    reference_.clear();
    armed_ = false;
    window_.reset();
  }
  void observe(int64_t step, const double* x) override {
    double v = x[0];
    if (!std::isfinite(v)) return;
    if (!armed_) {
      reference_.push_back(v);
      if (reference_.size() == ref_points_) {
        double sum = 0;
        for (double e : reference_) sum += e;
        ref_mean_ = sum / static_cast<double>(reference_.size());
        noise_ = difference_noise(reference_);
        armed_ = noise_ > min_scale_;
        reference_.clear();
      }
      return;
    }
    window_.push(v, step);
    if (!window_.full()) return;
    double m = window_.mean(), sd = window_.stddev();
    double move = (m - ref_mean_) / noise_;
    bool anomalous = sd < flat_ratio_ * noise_ && std::fabs(move) >= move_sigma_ && direction_allows(sign_, move);
    if (anomalous && !sustained_.episode().open) {
      onset_ = window_.step_from_oldest(0);
      window_sd_ = sd;
      window_mean_ = m;
    }
    if (sustained_.feed(step, anomalous, v, 1.0 / (sd + min_scale_))) emit();
  }
  void finish() override {
    if (sustained_.close()) emit();
  }

 private:
  void emit() {
    const Episode& e = sustained_.episode();
    report(onset_, e.end, e.peak_step, e.peak_value,
           {{"reference_mean", ref_mean_},
            {"reference_noise", noise_},
            {"window_mean", window_mean_},
            {"window_stddev", window_sd_},
            {"noise_ratio", window_sd_ / noise_},
            {"first_alarm_step", static_cast<double>(e.onset)}});
  }
  size_t ref_points_;
  std::vector<double> reference_;
  bool armed_ = false;
  double ref_mean_ = 0, noise_ = 0, flat_ratio_, move_sigma_, min_scale_;
  RingWindow window_;
  Sustained sustained_;
  int sign_;
  int64_t onset_ = 0;
  double window_sd_ = 0, window_mean_ = 0;
};

// ------------------------------------------------------------------------------------------------ heldout_decline
// Over-optimisation of a proxy: a held-out metric where higher is better (second input: eval reward, gold reward,
// eval accuracy), logged only at eval steps, falls below its best while the proxy (first input, logged every step)
// keeps rising. The driver carries the held-out value forward between evals, so a new eval is a value that
// differs from the previous one. The held-out level is the median of the last three evals. At each eval, once
// min_evals are in: the drop of that level from its best earlier value is
// compared with the eval-to-eval noise (robust spread of second differences of the first 64 evals, / sqrt 6), and the proxy's rise since that
// best eval (an exponentially weighted level at proxy_rate) with the proxy's early noise (difference_noise of its
// first proxy_reference_points values). An episode is min_points consecutive evals that both hold; its onset is the
// first of them (the decline began between the best eval and it).
class HeldoutDecline final : public Detector {
 public:
  explicit HeldoutDecline(const DetectorSpec& s) : Detector(s) {
    proxy_ref_points_ = static_cast<size_t>(std::max(3.0, s.param("proxy_reference_points", 50)));
    proxy_rate_ = s.param("proxy_rate", 0.05);
    min_evals_ = static_cast<size_t>(std::max(3.0, s.param("min_evals", 4)));
    drop_sigma_ = s.param("heldout_min_drop_sigma", 3);
    rise_sigma_ = s.param("proxy_min_rise_sigma", 2);
    sustained_.configure(static_cast<int64_t>(s.param("min_points", 2)), 0);
    proxy_ref_.reserve(proxy_ref_points_);
  }
  void reset() override {
    finish();
    proxy_ref_.clear();
    evals_.clear();
    eval_count_ = 0;
    proxy_sigma_ = 0;
    have_proxy_ = false;
    best_ = NaN;
  }
  void observe(int64_t step, const double* x) override {
    double proxy = x[0], heldout = x[1];
    if (std::isfinite(proxy)) {
      proxy_level_ = have_proxy_ ? proxy_level_ + proxy_rate_ * (proxy - proxy_level_) : proxy;
      have_proxy_ = true;
      if (proxy_sigma_ <= 0 && proxy_ref_.size() < proxy_ref_points_) {
        proxy_ref_.push_back(proxy);
        if (proxy_ref_.size() == proxy_ref_points_) proxy_sigma_ = difference_noise(proxy_ref_);
      }
    }
    if (!std::isfinite(heldout) || !have_proxy_) return;
    if (eval_count_ > 0 && heldout == last_eval_) return;  // carried forward: no new eval
    last_eval_ = heldout;
    ++eval_count_;
    if (evals_.size() < NOISE_EVALS) {
      evals_.push_back(heldout);
      // Second differences: evals are far apart, so the metric's own improvement between evals is large next to
      // its noise; a second difference cancels a locally linear trend (and has 6 x the variance of the noise).
      scratch_.clear();
      for (size_t i = 2; i < evals_.size(); ++i) scratch_.push_back(evals_[i] - 2 * evals_[i - 1] + evals_[i - 2]);
      double median = 0;
      if (scratch_.size() >= 2) {
        median_and_sigma(scratch_, median, eval_sigma_);
        eval_sigma_ /= std::sqrt(6.0);
      }
    }
    // The held-out level is the median of the last three evals: one lucky eval must not become a "best" that
    // every later eval seems to fall from.
    recent_[eval_count_ % 3] = heldout;
    double level = eval_count_ >= 3 ? median3(recent_[0], recent_[1], recent_[2]) : heldout;
    bool anomalous = false;
    if (eval_count_ >= min_evals_ && proxy_sigma_ > 0 && std::isfinite(best_)) {
      double eval_sigma = eval_sigma_;
      double drop = best_ - level, rise = proxy_level_ - proxy_at_best_;
      anomalous = eval_sigma > 0 && drop >= drop_sigma_ * eval_sigma && rise >= rise_sigma_ * proxy_sigma_;
      if (anomalous && !sustained_.episode().open) {
        evidence_ = {{"best_heldout", best_},
                     {"best_step", static_cast<double>(best_step_)},
                     {"heldout_value", level},
                     {"drop_sigma", drop / eval_sigma},
                     {"proxy_rise_sigma", rise / proxy_sigma_},
                     {"eval_noise", eval_sigma}};
      }
    }
    if (sustained_.feed(step, anomalous, level, best_ - level)) emit();
    if (!std::isfinite(best_) || level > best_) {
      best_ = level;
      best_step_ = step;
      proxy_at_best_ = proxy_level_;
    }
  }
  void finish() override {
    if (sustained_.close()) emit();
  }

 private:
  void emit() {
    const Episode& e = sustained_.episode();
    std::map<std::string, double> evidence = evidence_;
    evidence["evals"] = static_cast<double>(e.points);
    evidence["lowest_heldout"] = e.peak_value;
    report(e.onset, e.end, e.peak_step, e.peak_value, std::move(evidence));
  }
  // The eval-to-eval noise is estimated from the first NOISE_EVALS evals (memory stays fixed on long runs).
  static constexpr size_t NOISE_EVALS = 64;
  size_t proxy_ref_points_, min_evals_, eval_count_ = 0;
  double proxy_rate_, drop_sigma_, rise_sigma_, last_eval_ = 0, eval_sigma_ = 0;
  Sustained sustained_;
  std::vector<double> proxy_ref_, evals_, scratch_;
  double proxy_sigma_ = 0, proxy_level_ = 0;
  bool have_proxy_ = false;
  static double median3(double a, double b, double c) { return std::max(std::min(a, b), std::min(std::max(a, b), c)); }
  double recent_[3] = {0, 0, 0};
  double best_ = NaN, proxy_at_best_ = 0;
  int64_t best_step_ = 0;
  std::map<std::string, double> evidence_;
};

// ------------------------------------------------------------------------------------------------ zero_variance_groups
// GRPO learns nothing from a group whose rewards are all equal. With binary rewards at success rate p and groups of
// G samples, a fraction p^G + (1-p)^G of groups is expected to be uniform by chance alone; the detector fires when
// the logged fraction exceeds that by `margin` for min_points. When the reward mean is not a rate in [0, 1], the
// expectation is unknown and the fraction is compared with fallback_threshold instead.
class ZeroVarianceGroups final : public Detector {
 public:
  explicit ZeroVarianceGroups(const DetectorSpec& s) : Detector(s) {
    group_size_ = s.param("group_size", 8);
    margin_ = s.param("margin", 0.25);
    fallback_ = s.param("fallback_threshold", 0.9);
    sustained_.configure(static_cast<int64_t>(s.param("min_points", 5)), 0);
  }
  void reset() override { finish(); }
  void observe(int64_t step, const double* x) override {
    double frac = x[0], rate = x[1];
    if (!std::isfinite(frac)) return;
    double expected = NaN, limit = fallback_;
    if (std::isfinite(rate) && rate >= 0 && rate <= 1) {
      expected = std::pow(rate, group_size_) + std::pow(1 - rate, group_size_);
      limit = std::min(expected + margin_, 1.0 - 1e-9);
    }
    bool anomalous = frac > limit;
    if (anomalous) {
      if (!sustained_.episode().open) expected_sum_ = 0, rate_sum_ = 0, counted_ = 0;
      if (std::isfinite(expected)) expected_sum_ += expected, rate_sum_ += rate, ++counted_;
    }
    if (sustained_.feed(step, anomalous, frac, frac)) emit();
  }
  void finish() override {
    if (sustained_.close()) emit();
  }

 private:
  void emit() {
    const Episode& e = sustained_.episode();
    report(e.onset, e.end, e.peak_step, e.peak_value,
           {{"zero_std_fraction", e.mean()},
            {"expected_fraction", counted_ ? expected_sum_ / counted_ : NaN},
            {"reward_rate", counted_ ? rate_sum_ / counted_ : NaN},
            {"group_size", group_size_},
            {"points", static_cast<double>(e.points)}});
  }
  double group_size_, margin_, fallback_;
  Sustained sustained_;
  double expected_sum_ = 0, rate_sum_ = 0;
  int64_t counted_ = 0;
};

// ------------------------------------------------------------------------------------------------ schedule_jump
// Learning-rate schedules (warm-up, cosine, linear, constant) move smoothly. A jump is a relative change between
// consecutive values of at least jump_fraction (of the larger of the two) after smooth_window changes that were
// all below smooth_fraction: a warm-up from zero starts with large relative steps, so it never counts as smooth.
// A non-positive learning rate after a positive one is a jump too (a schedule that hit zero mid-run).
class ScheduleJump final : public Detector {
 public:
  explicit ScheduleJump(const DetectorSpec& s) : Detector(s) {
    jump_ = s.param("jump_fraction", 0.5);
    smooth_window_ = static_cast<int64_t>(s.param("smooth_window", 20));
    smooth_ = s.param("smooth_fraction", 0.1);
  }
  void reset() override {
    have_last_ = false;
    smooth_run_ = 0;
  }
  void observe(int64_t step, const double* x) override {
    double v = x[0];
    if (!std::isfinite(v)) return;
    if (have_last_) {
      double denom = std::max(std::fabs(v), std::fabs(last_));
      double rel = denom > 0 ? std::fabs(v - last_) / denom : 0.0;
      if (rel >= jump_ && smooth_run_ >= smooth_window_) {
        report(step, step, step, v,
               {{"previous", last_}, {"value", v}, {"relative_change", rel},
                {"smooth_steps_before", static_cast<double>(smooth_run_)}});
        smooth_run_ = 0;
      } else {
        smooth_run_ = rel < smooth_ ? smooth_run_ + 1 : 0;
      }
    }
    last_ = v;
    have_last_ = true;
  }
  void finish() override {}

 private:
  double jump_, smooth_;
  int64_t smooth_window_;
  double last_ = 0;
  bool have_last_ = false;
  int64_t smooth_run_ = 0;
};

}  // namespace

void Detector::report(int64_t onset, int64_t end, int64_t peak_step, double peak_value,
                      std::map<std::string, double> evidence) {
  Finding f;
  f.detector = spec_.id;
  f.fault = spec_.fault;
  f.area = spec_.area;
  f.severity = spec_.severity;
  f.metric = metric_names.empty() ? std::string() : metric_names.front();
  f.onset_step = onset;
  f.end_step = end;
  f.peak_step = peak_step;
  f.peak_value = peak_value;
  std::map<std::string, double> values = evidence;
  values["onset_step"] = static_cast<double>(onset);
  values["end_step"] = static_cast<double>(end);
  values["peak_step"] = static_cast<double>(peak_step);
  values["peak_value"] = peak_value;
  std::map<std::string, std::string> words = {{"metric", f.metric}};
  for (size_t i = 0; i < metric_names.size() && i < spec_.inputs.size(); ++i) words[spec_.inputs[i].first] = metric_names[i];
  f.explanation = fill_template(spec_.explanation, values, words);
  f.fixes = spec_.fixes;
  f.evidence = std::move(evidence);
  findings_.push_back(std::move(f));
}

const std::vector<std::string>* kind_parameters(const std::string& kind) {
  auto it = parameter_table().find(kind);
  return it == parameter_table().end() ? nullptr : &it->second;
}

const std::vector<KindOption>& kind_options(const std::string& kind) {
  static const std::map<std::string, std::vector<KindOption>> table = {
      {"level_shift", {{"direction", DIRECTIONS}, {"transform", TRANSFORMS}}},
      {"spike", {{"direction", DIRECTIONS}, {"transform", TRANSFORMS}}},
      {"controller", {{"direction", DIRECTIONS}, {"transform", TRANSFORMS}}},
      {"drift", {{"direction", DIRECTIONS}}},
      {"flat", {{"direction", DIRECTIONS}}},
      {"co_trend", {{"other_direction", {"up", "down"}}}},
  };
  static const std::vector<KindOption> none;
  auto it = table.find(kind);
  return it == table.end() ? none : it->second;
}

const std::vector<std::string>& detector_kinds() {
  static const std::vector<std::string> kinds = [] {
    std::vector<std::string> k;
    for (const auto& [name, params] : parameter_table()) k.push_back(name);
    return k;
  }();
  return kinds;
}

std::unique_ptr<Detector> make_detector(const DetectorSpec& spec) {
  const std::string& k = spec.kind;
  if (k == "level_shift") return std::make_unique<LevelShift>(spec);
  if (k == "spike") return std::make_unique<Spike>(spec);
  if (k == "drift") return std::make_unique<Drift>(spec);
  if (k == "threshold") return std::make_unique<Threshold>(spec);
  if (k == "controller") return std::make_unique<Controller>(spec);
  if (k == "co_trend") return std::make_unique<CoTrend>(spec);
  if (k == "flat") return std::make_unique<Flat>(spec);
  if (k == "heldout_decline") return std::make_unique<HeldoutDecline>(spec);
  if (k == "zero_variance_groups") return std::make_unique<ZeroVarianceGroups>(spec);
  if (k == "schedule_jump") return std::make_unique<ScheduleJump>(spec);
  return nullptr;  // non_finite is run by the scan driver over every series
}

}  // namespace rldk::detect
