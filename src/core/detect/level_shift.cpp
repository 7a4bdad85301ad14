// The level_shift kind (CUSUM against an adaptive, optionally trend-following forecast) and the controller kind
// built on it.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "detect/kind_support.h"
#include "stats/change_point.h"

namespace rldk::detect {
namespace {

// ------------------------------------------------------------------------------------------------ level_shift
// CUSUM on the one-step forecast errors of an adaptive robust reference (a level, or a level and slope), in units
// of its scale. The reference learns only while the watched CUSUM side is below freeze_fraction x h, so a starting
// shift is not absorbed; z is clipped to +-z_clip so one wild point cannot cross h alone (that is a spike, another
// detector). After an alarm the side keeps accumulating (capped at 2h) and the episode lasts until it returns to
// zero, or, with rearm_after > 0, it is judged after that many points and the detector starts over (see observe).
// An episode is reported when the level it reached moved at least min_change and 2k scale units; its onset is
// re-estimated from the points around the alarm (refine_onset).
//
// Before the warm-up is complete (a run's first logged points, or all of a run too short to warm up) there is no
// forecast, yet a metric can already jump. With early_min_change > 0, once EARLY_POINTS values are in the warm-up
// (from the fourth point on), a point at least early_min_change (working units, set from what the metric is known
// to do) and early_z point-to-point noise units (of the warm-up so far) beyond a level, the median of the warm-up so
// far or of its last 5 points, whichever lies further against the watched direction (a ramp from the first steps is
// judged against where it started; an entropy that fell steadily and then surged, against where it had got to), is
// kept out of the warm-up and joins an
// early episode; min_points such points in a row are a shift, reported when a point falls back or after `warmup`
// points, when the warm-up starts again from the new level. Fewer are an excursion, not a shift (spikes are
// another detector's).
//
// With `beyond_start: yes`, a shift (an early one too, which is then dated where it passed that level) is reported
// only when its level is also beyond where the run started (the median of its first START_POINTS values): a gradient
// norm that fell from 8 to 0.1 and came back to 2 rose 12x against the level it had fallen to, but it is a recovery,
// not an explosion. Nor is a level that ordinary points before the
// onset already passed (their 90th percentile, of up to LOOKBACK points): a GRPO norm of ~0.001 on steps whose
// groups all scored alike and ~0.06 on the others moves its median to 0.011 when the second kind grows more
// frequent, which is a mixture shifting, not an explosion.
//
// A run of at most `hindsight_points` logged points (hindsight_points > 0) in which the streaming test found
// nothing is also seen whole at its end. Its warm-up is a third of it or more (20 points of a 60-point run), so a
// shift in the first third, or one the warm-up's own line absorbed, goes unseen. The scan has every point by then,
// so it takes the largest jump of the series against lines fitted on each side of it (stats::largest_jump). A jump of
// at least `hindsight_z` standard errors, `hindsight_min_change` in size and held by the median after it is a shift.
// A KL that climbs steeply from zero and levels off leaves no such jump: the line before it follows its slope.
class LevelShift : public Detector {
 public:
  explicit LevelShift(const DetectorSpec& s) : Detector(s) {
    ref_.configure(static_cast<int>(s.param("warmup", 50)), s.param("adapt_rate", 0.02),
                   s.param("min_relative_scale", 0.0), s.param("min_scale", 1e-12), s.param("trend_rate", 0.0),
                   s.option("warmup_level", "median") == "line_end");
    k_ = s.param("k", 1.0);
    h_ = s.param("h", 10.0);
    z_clip_ = s.param("z_clip", 4.0);
    freeze_ = s.param("freeze_fraction", 0.3) * h_;
    min_points_ = static_cast<int64_t>(s.param("min_points", 1));
    min_change_ = s.param("min_change", 0.0);
    rearm_after_ = static_cast<int64_t>(s.param("rearm_after", 0));
    warmup_ = static_cast<int64_t>(s.param("warmup", 50));
    early_min_change_ = s.param("early_min_change", 0.0);
    early_z_ = s.param("early_z", 4.0);
    sign_ = direction_sign(s);
    log_ = s.option("transform", "none") == "log";
    ramp_onset_ = s.option("onset", "shift") == "ramp";
    beyond_start_ = s.option("beyond_start", "no") == "yes";
    hindsight_points_ = static_cast<size_t>(std::max(0.0, s.param("hindsight_points", 0)));
    hindsight_z_ = s.param("hindsight_z", 5);
    hindsight_min_change_ = s.param("hindsight_min_change", 0);
    min_scale_ = s.param("min_scale", 1e-12);
    whole_.reserve(hindsight_points_);
    lookback_.configure(LOOKBACK);
    recent_.configure(LOOKBACK);
    warm_tail_.configure(PRE_ONSET_POINTS);
    episode_z_.reserve(EPISODE_Z_CAP);
    if (ramp_onset_) episode_values_.reserve(EPISODE_Z_CAP);
    scratch_.reserve(PRE_ONSET_POINTS);
  }
  void reset() override {
    finish();
    ref_.reset();
    cusum_.reset();
    lookback_.reset();
    recent_.reset();
    warm_tail_.reset();
    side_ = 0;
    whole_.clear();
    whole_too_long_ = false;
  }
  void observe(int64_t step, const double* x) override {
    double raw = x[0];
    // On a log scale, zero is where a metric vanished (a gradient norm at a step whose groups all scored alike): it
    // counts for a fall, but it is no level for a rise to be measured from, or a norm back at 0.06 after a run of
    // zeros reads as a rise from 1e-12.
    if (log_ && sign_ > 0 && !(raw > 0)) return;
    double v = transformed(log_, raw);
    if (std::isnan(v)) return;
    if (firsts_.size() < START_POINTS) firsts_.push_back(v);
    if (hindsight_points_ > 0 && !whole_too_long_) {
      whole_too_long_ = whole_.size() == hindsight_points_;
      if (whole_too_long_) {
        whole_.clear();
      } else {
        whole_.push_back({step, raw, v});
      }
    }
    if (pending_) follow_pending(step, v);
    if (!ref_.armed()) {
      if (early_min_change_ > 0 && (early_.open || ref_.warmed() >= EARLY_POINTS) && observe_early(step, raw, v)) {
        return;
      }
      close_early();
      warm_tail_.push(v, step);
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
      recent_.push(v, step);
    } else if (episode_z_.size() < EPISODE_Z_CAP) {
      episode_z_.push_back(onset_z);
      if (ramp_onset_) episode_values_.emplace_back(step, v);
    }
    if (side_ == 0) {
      bool up = cusum_.up > h_ && sign_ >= 0, down = cusum_.down > h_ && sign_ <= 0;
      if (up || down) {
        emit_pending();
        side_ = up ? 1 : -1;
        episode_.begin(side_ > 0 ? cusum_.up_start : cusum_.down_start);
        episode_z_.clear();
        episode_values_.clear();
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
        close();  // a confirmed shift is now the pending finding (an earlier one was emitted when this one began)
        cusum_.reset();
        lookback_.reset();
        recent_.reset();
        if (pending_) {
          ref_.reset();
        } else {
          ref_.reanchor(now);
        }
      }
    }
  }
  void finish() override {
    close();
    close_early();
    emit_pending();
    if (findings_.empty()) judge_whole();
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
    // The baseline is the forecast, unless a slope extrapolated it away from the change beyond the level the metric
    // actually had just before the onset (KL falling from 5 to 1.3 nats, forecast on to 0.04, then holding at 1.3
    // to 2; entropy rising to 0.5, forecast on to 0.62, then easing back): then it is that level, and the change is
    // measured from where the metric was, not from a value it never had.
    double before = ramp_onset_ ? ramp_before_ : level_before_onset();
    double baseline = baseline_;
    if (std::isfinite(before) && episode_side_ * (before - baseline_) > 0) baseline = before;
    // The change is how far the smoothed level got from the baseline (working units): a slow approach to a new
    // level, or a shift that later recovers, is judged on the level it reached, not on the episode's average.
    double change = reached_ - episode_side_ * (baseline - baseline_);
    double base = log_ ? std::exp(baseline) : baseline;
    double reached_v = baseline + episode_side_ * change;
    double reached = log_ ? std::exp(reached_v) : reached_v;
    // What a person reads is the episode's mean level (raw units); the decision uses the level reached. A climb
    // dated after the alarm (onset: ramp) is read from its onset on.
    double level = ramp_onset_ && std::isfinite(ramp_level_) ? ramp_level_ : episode_.mean();
    if (episode_.points < min_points_ || change < min_change_) return;
    // What a person reads is "from baseline to level": a forecast that was heading steeply one way can make a
    // small move of the level look like a large one against it. The mean level must show at least half the change.
    double mean_moved = episode_side_ * (transformed(log_, level) - baseline);
    if (!(mean_moved >= 0.5 * min_change_)) return;
    // Nor may the shift exist only against the forecast: a slope learned from a short warm-up (a sparsely logged
    // run, a metric that turned) extrapolates away from the data, and the metric holding still then reads as a
    // shift. The episode's mean level must also be half the change away from the level the metric actually had
    // just before the onset.
    if (std::isfinite(before) && !(episode_side_ * (transformed(log_, level) - before) >= 0.5 * min_change_)) return;
    if (beyond_start_ && !firsts_.empty()) {
      if (!(episode_side_ * (transformed(log_, level) - start_level()) > 0)) return;
      double ordinary = ordinary_extreme_before_onset();
      if (std::isfinite(ordinary) && !(episode_side_ * (transformed(log_, level) - ordinary) > 0)) return;
    }
    double sigma = scale_;
    // CUSUM also crosses h when noise drifts by about k for long enough; an episode whose level moved less than
    // 2k reference sigmas is that, not a shift of the size the detector is tuned for (2 sigma and more).
    if (change / sigma < 2 * k_) return;
    std::map<std::string, double> evidence = {{"baseline", base},
                                              {"level", level},
                                              {"reached", reached},
                                              {"shift_sigma", episode_side_ * change / sigma},
                                              {"ratio", base != 0 ? level / base : NaN},
                                              {"alarm_step", static_cast<double>(alarm_step_)},
                                              {"points", static_cast<double>(episode_.points)}};
    if (!confirm(evidence)) return;
    alarm(episode_.end, rearm_after_ > 0 ? evidence : std::map<std::string, double>{});
    if (rearm_after_ <= 0) {
      report(episode_.onset, episode_.end, episode_.peak_step, episode_.peak_value, std::move(evidence));
      return;
    }
    // Re-armed: the finding waits while the metric stays at least half-way to the level it reached, so its end
    // step says how long the shift lasted, not when it was judged.
    pending_ = true;
    pending_episode_ = episode_;
    pending_evidence_ = std::move(evidence);
    tail_base_ = baseline;
    tail_side_ = episode_side_;
    tail_threshold_ = change / 2;
    tail_smoothed_ = smoothed_;
  }
  // A point judged against the provisional reference of the warm-up so far; true when it belongs to an early episode
  // (it then stays out of the warm-up).
  bool observe_early(int64_t step, double raw, double v) {
    if (!early_.open) ref_.provisional_recent(scratch_, EARLY_RECENT_POINTS, sign_, early_level_, early_sigma_);
    double z = 0;
    if (!early_departure(v - early_level_, early_sigma_, early_min_change_, early_z_, sign_, z)) return false;
    if (!early_.open) {
      early_.begin(step);
      early_sum_ = 0;
      early_beyond_step_.reset();
    }
    early_.add(step, raw, std::fabs(z));
    early_sum_ += v;
    if (beyond_start_ && !early_beyond_step_ && sign_ * (v - start_level()) > 0) early_beyond_step_ = step;
    if (early_.points == min_points_) early_confirmed_ = step;
    if (early_.points >= warmup_) {
      // Held for a whole warm-up: the new level is the metric's normal from here on, learned afresh.
      close_early();
      ref_.reset();
    }
    return true;
  }
  void close_early() {
    if (!early_.open) return;
    early_.open = false;
    if (early_.points < min_points_) return;
    double base = log_ ? std::exp(early_level_) : early_level_;
    double mean_v = early_sum_ / static_cast<double>(early_.points);
    double reached = log_ ? std::exp(mean_v) : mean_v;
    double level = early_.mean();
    // With beyond_start, an early shift too must end beyond where the run started, and it is dated where it passed
    // that level: an entropy that surged and then fell back through its start collapsed there, not where the fall
    // from the surge began.
    int64_t onset = early_.onset;
    if (beyond_start_) {
      if (!early_beyond_step_ || !(sign_ * (mean_v - start_level()) > 0)) return;
      onset = *early_beyond_step_;
    }
    std::map<std::string, double> evidence = {{"baseline", base},
                                              {"level", level},
                                              {"reached", reached},
                                              {"shift_sigma", (mean_v - early_level_) / early_sigma_},
                                              {"ratio", base != 0 ? level / base : NaN},
                                              {"alarm_step", static_cast<double>(early_confirmed_)},
                                              {"points", static_cast<double>(early_.points)}};
    if (!confirm(evidence)) return;
    alarm(early_.end);
    report(onset, early_.end, early_.peak_step, early_.peak_value, std::move(evidence));
  }
  // A short run seen whole (see the class comment): its largest jump in the watched direction, reported when it is
  // large, held and many standard errors wide. The episode runs from the jump to the last point before the metric
  // falls back below half-way for HINDSIGHT_BEFORE_AFTER points in a row (or to the end).
  void judge_whole() {
    if (whole_too_long_ || whole_.empty()) return;
    int sign = sign_ == 0 ? 1 : sign_;
    for (int pass = 0; pass < (sign_ == 0 ? 2 : 1); ++pass, sign = -sign) {
      scratch_.clear();
      for (const WholePoint& p : whole_) scratch_.push_back(sign * p.v);
      stats::Jump jump = stats::largest_jump(scratch_, HINDSIGHT_BEFORE_AFTER, HINDSIGHT_BEFORE_AFTER,
                                             HINDSIGHT_WINDOW, min_scale_);
      if (!(jump.z >= hindsight_z_ && jump.gap >= hindsight_min_change_ && jump.held >= hindsight_min_change_)) {
        continue;
      }
      size_t first = jump.index, last = first, below = 0;
      auto jump_at = scratch_.begin() + static_cast<std::ptrdiff_t>(first);
      std::vector<double> before_values(jump_at - static_cast<std::ptrdiff_t>(std::min(first, HINDSIGHT_BEFORE_AFTER)),
                                        jump_at);
      double before = stats::median_in_place(before_values);  // signed working units
      double halfway = before + jump.held / 2;
      Episode episode;
      episode.begin(whole_[first].step);
      for (size_t i = first; i < whole_.size(); ++i) {
        below = scratch_[i] < halfway ? below + 1 : 0;
        if (below >= HINDSIGHT_BEFORE_AFTER) break;
        if (below == 0) last = i;
      }
      for (size_t i = first; i <= last; ++i) episode.add(whole_[i].step, whole_[i].raw, scratch_[i] - before);
      double base = log_ ? std::exp(sign * before) : sign * before;
      double reached_v = sign * (before + jump.held);
      std::map<std::string, double> evidence = {{"baseline", base},
                                                {"level", episode.mean()},
                                                {"reached", log_ ? std::exp(reached_v) : reached_v},
                                                {"shift_sigma", jump.sigmas},
                                                {"jump_z", jump.z},
                                                {"ratio", base != 0 ? episode.mean() / base : NaN},
                                                {"alarm_step", static_cast<double>(whole_.back().step)},
                                                {"points", static_cast<double>(last - first + 1)},
                                                {"hindsight", 1}};
      if (!confirm(evidence)) continue;
      report(episode.onset, whole_[last].step, episode.peak_step, episode.peak_value, std::move(evidence));
      return;
    }
  }
  // The CUSUM's change time is where the side last left zero; noise that kept it above zero before the change
  // dates it too early. With the points after the alarm in hand, the onset is re-estimated as the maximum-likelihood
  // change point of a mean shift in z: the candidate t in [CUSUM start, alarm] maximising S(t)^2 / n(t), where S(t)
  // is the sum of z from t to the last point seen and n(t) the number of those points.
  void refine_onset() {
    if (ramp_onset_) {
      refine_ramp_onset();
      return;
    }
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
  // With `onset: ramp`, for a metric whose fault is a steady climb (a leak): the start of a flat-then-linear fit
  // (stats::ramp_start) over the points before the alarm and the episode's points. A mean-shift split dates a ramp a
  // third of the way into it, and a slowly wandering metric (memory) can raise the alarm on its own wander just
  // before a leak begins; the fit over the points after the alarm dates the climb itself, even after the alarm.
  void refine_ramp_onset() {
    std::vector<double> values;
    std::vector<int64_t> steps;
    int count = recent_.size();
    values.reserve(static_cast<size_t>(count) + episode_values_.size());
    steps.reserve(values.capacity());
    for (int i = 0; i < count; ++i) {
      values.push_back(recent_.at_from_oldest(i));
      steps.push_back(recent_.step_from_oldest(i));
    }
    for (const auto& [step, v] : episode_values_) {
      values.push_back(v);
      steps.push_back(step);
    }
    ramp_level_ = ramp_before_ = NaN;
    if (values.size() < 3) return;
    size_t min_after = static_cast<size_t>(std::max<int64_t>(min_points_, 1));
    size_t start = std::min(stats::ramp_start(values, std::min(min_after, values.size() - 1)), steps.size() - 1);
    episode_.onset = steps[start];
    // The level the climb reached on average (raw units) and the one the metric had just before it (working units).
    double sum = 0;
    for (size_t i = start; i < values.size(); ++i) sum += values[i];
    double mean = sum / static_cast<double>(values.size() - start);
    ramp_level_ = log_ ? std::exp(mean) : mean;
    if (start > 0) {
      std::vector<double> before(values.begin() + static_cast<std::ptrdiff_t>(start - std::min(start, PRE_ONSET_POINTS)),
                                 values.begin() + static_cast<std::ptrdiff_t>(start));
      ramp_before_ = stats::median_in_place(before);
    }
  }
  // Median of the last PRE_ONSET_POINTS values (working units) before the episode's onset; NaN when none was seen.
  double level_before_onset() {
    scratch_.clear();
    // The points seen since the reference was armed, and, for a change that began at once, the warm-up's last ones.
    for (const RingWindow* window : {&recent_, &warm_tail_}) {
      for (int i = window->size() - 1; i >= 0 && scratch_.size() < PRE_ONSET_POINTS; --i) {
        if (window->step_from_oldest(i) < episode_.onset) scratch_.push_back(window->at_from_oldest(i));
      }
    }
    return scratch_.empty() ? NaN : stats::median_in_place(scratch_);
  }
  // The ordinary upper (or, for a fall, lower) range of the points before the episode's onset: their 90th (10th)
  // percentile, of up to LOOKBACK points (working units); NaN with fewer than PRE_ONSET_POINTS.
  double ordinary_extreme_before_onset() {
    scratch_.clear();
    for (const RingWindow* window : {&recent_, &warm_tail_}) {
      for (int i = window->size() - 1; i >= 0 && scratch_.size() < static_cast<size_t>(LOOKBACK); --i) {
        if (window->step_from_oldest(i) < episode_.onset) scratch_.push_back(window->at_from_oldest(i));
      }
    }
    if (scratch_.size() < PRE_ONSET_POINTS) return NaN;
    std::sort(scratch_.begin(), scratch_.end());
    return stats::quantile_sorted(scratch_, episode_side_ > 0 ? ORDINARY_QUANTILE : 1 - ORDINARY_QUANTILE);
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
  // The values (working units) of the same points, for the level the metric had before an onset.
  RingWindow recent_;
  RingWindow warm_tail_;  // the warm-up's last PRE_ONSET_POINTS values
  static constexpr size_t PRE_ONSET_POINTS = 10;
  static constexpr double ORDINARY_QUANTILE = 0.9;
  std::vector<double> scratch_;
  std::vector<double> episode_z_;
  // With `onset: ramp`: the episode's points (working units), for the flat-then-linear fit of its start.
  bool ramp_onset_ = false;
  // With `beyond_start: yes`: the run's first values (working units), whose median a shift must pass.
  static constexpr size_t START_POINTS = 5;
  bool beyond_start_ = false;
  std::vector<double> firsts_;
  std::optional<int64_t> early_beyond_step_;  // the first point of the open early episode beyond the start level
  // The median of the run's first values (working units); NaN before the first.
  double start_level() const {
    if (firsts_.empty()) return NaN;
    std::vector<double> firsts(firsts_);
    return stats::median_in_place(firsts);
  }
  double ramp_level_ = NaN, ramp_before_ = NaN;
  std::vector<std::pair<int64_t, double>> episode_values_;
  // A judged finding of a re-armed detector, held while the shift lasts.
  bool pending_ = false;
  Episode pending_episode_;
  std::map<std::string, double> pending_evidence_;
  int tail_side_ = 0;
  double tail_base_ = 0, tail_threshold_ = 0, tail_smoothed_ = 0;
  int64_t alarm_step_ = 0;
  // The early rule (before the warm-up is complete): its episode and the provisional reference it is judged against.
  static constexpr int EARLY_POINTS = 3;
  // The early rule's level: the median of this many latest warm-up points (where the metric is now).
  static constexpr size_t EARLY_RECENT_POINTS = 5;
  int64_t warmup_ = 50;
  double early_min_change_ = 0, early_z_ = 4;
  Episode early_;
  double early_level_ = 0, early_sigma_ = 1, early_sum_ = 0;
  int64_t early_confirmed_ = 0;
  // The whole of a short run, for judge_whole: up to hindsight_points points (raw and working units).
  struct WholePoint {
    int64_t step;
    double raw, v;
  };
  static constexpr size_t HINDSIGHT_BEFORE_AFTER = 5;  // points a jump needs on each side
  static constexpr size_t HINDSIGHT_WINDOW = 10;       // points of each side's line
  size_t hindsight_points_ = 0;
  double hindsight_z_ = 5, hindsight_min_change_ = 0, min_scale_ = 1e-12;
  std::vector<WholePoint> whole_;
  bool whole_too_long_ = false;
};


// ------------------------------------------------------------------------------------------------ controller
// An adaptive KL controller raises its coefficient while KL is above target, and KL follows. The failure: KL shifts
// to a new level (a level_shift on the first input, with all of its parameters) and stays there although the
// coefficient (second input) rose by at least coef_min_relative_change between the shift's onset and the point
// where the episode is judged: the penalty no longer restrains the policy; or the coefficient had been adapting
// before the shift and did not move at all through it: the controller stopped updating. A coefficient fixed for
// the whole run (GRPO's beta, or no controller) is neither, so a KL shift alone is kl_level_shift's finding.
class Controller final : public LevelShift {
 public:
  explicit Controller(const DetectorSpec& s)
      : LevelShift(s), coef_min_change_(s.param("coef_min_relative_change", 0.05)) {}

 protected:
  void before_update(const double* x) override {
    double coef = x[1];
    if (!std::isfinite(coef)) return;
    if (change_may_start_here() || !std::isfinite(coef_start_)) {
      // Before a change starts: remember whether the coefficient has been adapting at all.
      if (std::isfinite(coef_start_) && coef != coef_start_) adapting_ = true;
      coef_start_ = coef;
    }
    coef_last_ = coef;
  }
  bool confirm(std::map<std::string, double>& evidence) override {
    double rel = coef_start_ > 0 ? coef_last_ / coef_start_ - 1 : NaN;
    bool pushing_in_vain = rel >= coef_min_change_;
    // A coefficient that had been adapting and then froze exactly while KL shifted: the controller stopped updating.
    bool frozen = adapting_ && rel == 0;
    if (!pushing_in_vain && !frozen) return false;
    evidence["coef_start"] = coef_start_;
    evidence["coef_end"] = coef_last_;
    evidence["coef_relative_change"] = rel;
    evidence["controller_frozen"] = frozen ? 1 : 0;
    return true;
  }

 private:
  double coef_min_change_;
  double coef_start_ = NaN, coef_last_ = NaN;
  bool adapting_ = false;
};

}  // namespace

std::unique_ptr<Detector> make_level_shift(const DetectorSpec& spec) { return std::make_unique<LevelShift>(spec); }
std::unique_ptr<Detector> make_controller(const DetectorSpec& spec) { return std::make_unique<Controller>(spec); }

}  // namespace rldk::detect
