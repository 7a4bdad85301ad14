// Kinds that compare trailing windows: drift (against an early reference), co_trend (two inputs moving together)
// and flat (a metric that stopped moving).
#include <algorithm>
#include <cmath>
#include <map>

#include "detect/kind_support.h"
#include "stats/change_point.h"
#include "stats/robust.h"

namespace rldk::detect {
namespace {

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
        ref_mean_ = stats::mean(reference_);
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
    if (sustained_.confirmed()) alarm(step);
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

// A ramp's start inside a full window is searched over all but its last RAMP_MIN_AFTER points (stats::ramp_start):
// fewer points on the slope could fit noise.
constexpr size_t RAMP_MIN_AFTER = 10;

// ------------------------------------------------------------------------------------------------ co_trend
// Two inputs moving together in a bad way over a trailing window: the proxy (first input) rises by at least
// proxy_min_sigma reference sigmas between the older and newer half of the window, while the other input moves in
// other_direction by at least other_min_relative_change of its older-half level (when > 0) or other_min_sigma of
// its reference sigmas. Reference sigmas are difference_noise of the first reference_points values. The onset is
// where the other input's rise began inside the window (stats::ramp_start).
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
      onset_ = other_.step_from_oldest(ramp_start_in(other_));
      last_proxy_z_ = proxy_z;
      last_other_rel_ = other_rel;
      last_other_sigma_ = other_sigma_ > 0 ? other_change / other_sigma_ : NaN;
    }
    if (sustained_.feed(step, anomalous, p, proxy_z)) emit();
    if (sustained_.confirmed()) alarm(step);
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
  // Where the ramp the window ends on began (index from its oldest point).
  int ramp_start_in(const RingWindow& w) {
    scratch_.resize(static_cast<size_t>(w.size()));
    for (int i = 0; i < w.size(); ++i) scratch_[static_cast<size_t>(i)] = w.at_from_oldest(i);
    return static_cast<int>(stats::ramp_start(scratch_, RAMP_MIN_AFTER));
  }
  size_t ref_points_;
  std::vector<double> ref_proxy_, ref_other_, scratch_;
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
//
// The streaming test needs reference_points + window + min_points points (45 at the least, after scaling to the
// logging interval); a run of 20-40 logged points whose loss flatlined at its 12th is never judged. With
// hindsight_points > 0, a run of at most that many points in which the streaming test found nothing is seen whole
// at its end: the earliest split, with at least HINDSIGHT_SIDE points before it and max(HINDSIGHT_SIDE, min_points)
// after, where the points after it pass the same test against the noise and mean of the points before it.
class Flat final : public Detector {
 public:
  explicit Flat(const DetectorSpec& s) : Detector(s) {
    ref_points_ = static_cast<size_t>(std::max(4.0, s.param("reference_points", 100)));
    window_.configure(static_cast<int>(s.param("window", 50)));
    flat_ratio_ = s.param("flat_ratio", 0.1);
    move_sigma_ = s.param("min_move_sigma", 0.0);
    min_scale_ = s.param("min_scale", 1e-12);
    min_points_ = static_cast<size_t>(std::max(1.0, s.param("min_points", 1)));
    sustained_.configure(static_cast<int64_t>(min_points_), 0);
    sign_ = direction_sign(s);
    hindsight_points_ = static_cast<size_t>(std::max(0.0, s.param("hindsight_points", 0)));
    whole_.reserve(hindsight_points_);
  }
  void reset() override {
    finish();
    reference_.clear();
    armed_ = false;
    window_.reset();
    whole_.clear();
    whole_too_long_ = false;
  }
  void observe(int64_t step, const double* x) override {
    double v = x[0];
    if (!std::isfinite(v)) return;
    if (hindsight_points_ > 0 && !whole_too_long_) {
      whole_too_long_ = whole_.size() == hindsight_points_;
      if (whole_too_long_) {
        whole_.clear();
      } else {
        whole_.emplace_back(step, v);
      }
    }
    if (!armed_) {
      reference_.push_back(v);
      if (reference_.size() == ref_points_) {
        ref_mean_ = stats::mean(reference_);
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
    if (sustained_.confirmed()) alarm(step);
  }
  void finish() override {
    if (sustained_.close()) emit();
    if (findings_.empty()) judge_whole();
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
  // A short run seen whole (see the class comment). The episode runs from the split to the last point; its peak is
  // the point furthest from the flat level.
  void judge_whole() {
    size_t n = whole_.size(), tail_min = std::max(HINDSIGHT_SIDE, min_points_);
    if (whole_too_long_ || n < HINDSIGHT_SIDE + tail_min) return;
    std::vector<double> head;
    for (size_t split = HINDSIGHT_SIDE; split + tail_min <= n; ++split) {
      head.clear();
      for (size_t i = 0; i < split; ++i) head.push_back(whole_[i].second);
      double head_mean = stats::mean(head);
      double noise = difference_noise(head);  // reorders head
      if (!(noise > min_scale_)) continue;
      double sum = 0, sum_sq = 0;
      for (size_t i = split; i < n; ++i) sum += whole_[i].second;
      double count = static_cast<double>(n - split), tail_mean = sum / count;
      for (size_t i = split; i < n; ++i) sum_sq += (whole_[i].second - tail_mean) * (whole_[i].second - tail_mean);
      double sd = std::sqrt(sum_sq / count), move = (tail_mean - head_mean) / noise;
      if (!(sd < flat_ratio_ * noise && std::fabs(move) >= move_sigma_ && direction_allows(sign_, move))) continue;
      size_t peak = split;
      for (size_t i = split; i < n; ++i) {
        if (std::fabs(whole_[i].second - tail_mean) > std::fabs(whole_[peak].second - tail_mean)) peak = i;
      }
      report(whole_[split].first, whole_.back().first, whole_[peak].first, whole_[peak].second,
             {{"reference_mean", head_mean},
              {"reference_noise", noise},
              {"window_mean", tail_mean},
              {"window_stddev", sd},
              {"noise_ratio", sd / noise},
              {"first_alarm_step", static_cast<double>(whole_.back().first)},
              {"hindsight", 1}});
      return;
    }
  }
  static constexpr size_t HINDSIGHT_SIDE = 8;
  size_t min_points_ = 1, hindsight_points_ = 0;
  std::vector<std::pair<int64_t, double>> whole_;
  bool whole_too_long_ = false;
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

}  // namespace

std::unique_ptr<Detector> make_drift(const DetectorSpec& spec) { return std::make_unique<Drift>(spec); }
std::unique_ptr<Detector> make_co_trend(const DetectorSpec& spec) { return std::make_unique<CoTrend>(spec); }
std::unique_ptr<Detector> make_flat(const DetectorSpec& spec) { return std::make_unique<Flat>(spec); }

}  // namespace rldk::detect
