// Online first divergence between two aligned runs (see compare.h and docs/compare.md). The tests on z = d / sigma
// are the shared ones: stats::Cusum for level shifts and drifts, stats::departure_from_zero for the onset.
#include <algorithm>
#include <cmath>
#include <limits>

#include "rldk/compare.h"
#include "stats/change_point.h"
#include "stats/cusum.h"
#include "stats/robust.h"

namespace rldk {
namespace {

bool same_non_finite(double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::isinf(a) && std::isinf(b) && std::signbit(a) == std::signbit(b);
}

// Beyond a critical level of the healthy range: an absolute side, or a side relative to the run's first value
// (judged only when that value is positive, as a multiple of it means nothing otherwise). NaN levels compare false.
bool beyond_critical(const HealthyRange& h, double v, double first) {
  if (v > h.above.critical || v < h.below.critical) return true;
  if (!(first > 0)) return false;
  return v > h.above_start.critical * first || v < h.below_start.critical * first;
}

}  // namespace

class DivergenceDetector::State {
 public:
  explicit State(DivergenceOptions options) : options_(std::move(options)) {
    options_.noise_window = std::max<size_t>(options_.noise_window, 2);
    options_.onset_window = std::max<size_t>(options_.onset_window, 2);
    if (options_.sigma) {
      armed_ = true;
      result_.sigma_source = "given";
    } else {
      result_.sigma_source = "data";
    }
  }

  const Divergence& result() const { return result_; }
  bool push(int64_t step, double a, double b);
  void finish();

 private:
  struct Buffered {
    int64_t step;
    double a, b;
    size_t index;  // position among tested points (0 = first common step)
  };

  bool test(int64_t step, double a, double b);
  bool replay_warmup(int64_t detected_step);
  double current_sigma() const;
  void record(int64_t step, double a, double b);
  void estimate_onset(int64_t detected_step, const std::string& detector);

  DivergenceOptions options_;
  Divergence result_;
  bool armed_ = false;
  bool has_previous_ = false;
  double first_a_ = std::numeric_limits<double>::quiet_NaN(), first_b_ = first_a_;  // for the healthy range
  bool spike_pending_ = false;   // a spike alarmed; the next point tells a spike from a level shift
  size_t refine_remaining_ = 0;  // points still to collect before the onset estimate is refined
  size_t tested_ = 0;            // points tested so far (index of the next one)
  double previous_a_ = 0.0, previous_b_ = 0.0;
  std::vector<double> diffs_a_, diffs_b_;  // ring buffers of first differences
  size_t diff_next_ = 0;
  std::vector<double> magnitudes_;  // |a|, |b| of the warm-up, for the relative sigma floor
  std::vector<Buffered> warmup_points_;
  std::vector<Buffered> recent_;  // ring of the last onset_window tested points
  size_t recent_next_ = 0;
  stats::Cusum cusum_;
};

DivergenceDetector::DivergenceDetector(DivergenceOptions options)
    : state_(std::make_unique<State>(std::move(options))) {}
DivergenceDetector::~DivergenceDetector() = default;
DivergenceDetector::DivergenceDetector(DivergenceDetector&&) noexcept = default;
DivergenceDetector& DivergenceDetector::operator=(DivergenceDetector&&) noexcept = default;

bool DivergenceDetector::push(int64_t step, double a, double b) { return state_->push(step, a, b); }
void DivergenceDetector::finish() { state_->finish(); }
const Divergence& DivergenceDetector::result() const { return state_->result(); }

double DivergenceDetector::State::current_sigma() const {
  double floor = options_.sigma_floor_abs;
  if (!magnitudes_.empty()) {
    std::vector<double> m = magnitudes_;
    floor = std::max(floor, options_.sigma_floor_rel * stats::median_in_place(m));
  }
  if (options_.sigma) return std::max(*options_.sigma, floor);
  double sa = robust_scale(diffs_a_) / std::sqrt(2.0);
  double sb = robust_scale(diffs_b_) / std::sqrt(2.0);
  // d = b - a: if both runs carry independent noise of these sizes, d's noise is their root sum of squares.
  double s = std::sqrt((std::isfinite(sa) ? sa * sa : 0.0) + (std::isfinite(sb) ? sb * sb : 0.0));
  return std::max(s, floor);
}

void DivergenceDetector::State::record(int64_t step, double a, double b) {
  Buffered point{step, a, b, tested_++};
  if (recent_.size() < options_.onset_window) {
    recent_.push_back(point);
  } else {
    recent_[recent_next_] = point;
    recent_next_ = (recent_next_ + 1) % options_.onset_window;
  }
}

// Arms the tests and runs them over the points buffered during the warm-up. A divergence found among them is
// reported at `detected_step`: the detector could only know once its warm-up ended. True when one was found.
bool DivergenceDetector::State::replay_warmup(int64_t detected_step) {
  armed_ = true;
  auto buffered = std::move(warmup_points_);
  warmup_points_.clear();
  bool detected = false;
  for (const auto& p : buffered) {
    if (result_.diverged) {
      if (spike_pending_ || refine_remaining_ > 0) push(p.step, p.a, p.b);  // classify / refine
      continue;
    }
    if (test(p.step, p.a, p.b)) {
      result_.detected_step = detected_step;
      detected = true;
    }
  }
  return detected;
}

bool DivergenceDetector::State::push(int64_t step, double a, double b) {
  if (refine_remaining_ > 0) {
    if (std::isfinite(a) && std::isfinite(b)) {
      record(step, a, b);
      if (--refine_remaining_ == 0) estimate_onset(result_.detected_step, result_.detector);
    }
    return false;
  }
  if (result_.diverged && !spike_pending_) return false;
  bool finite = std::isfinite(a) && std::isfinite(b);
  if (!finite && same_non_finite(a, b)) return false;  // both runs logged the same non-number: no evidence either way

  if (spike_pending_) {
    // The point after a spike alarm: still far off on the same side means the level moved, not a one-off spike.
    spike_pending_ = false;
    double z = finite ? (b - a) / result_.sigma : 0.0;
    if (std::fabs(z) > options_.spike_z / 2 && std::signbit(z) == std::signbit(result_.z)) {
      // Onset, size and kind then come from the least-squares fit once a few more points have arrived.
      result_.kind = tested_ <= options_.offset_points ? "offset" : "level_shift";
      record(step, a, b);
      refine_remaining_ = options_.refine_points;
    }
    return false;
  }

  if (!finite) {
    // One run produced a non-number where the other did not. Points still in the warm-up come first.
    if (!armed_) {
      replay_warmup(step);
      if (result_.diverged) {
        spike_pending_ = false;
        return true;
      }
    }
    result_.diverged = true;
    result_.onset_step = result_.detected_step = step;
    result_.kind = result_.detector = "non_finite";
    result_.sigma = current_sigma();
    result_.magnitude = b - a;
    result_.z = std::isnan(result_.magnitude) ? std::numeric_limits<double>::quiet_NaN()
                                              : result_.magnitude / result_.sigma;
    return true;
  }

  if (std::isnan(first_a_)) first_a_ = a;
  if (std::isnan(first_b_)) first_b_ = b;
  if (options_.healthy &&
      beyond_critical(*options_.healthy, a, first_a_) != beyond_critical(*options_.healthy, b, first_b_)) {
    // One run left the metric's healthy range and the other did not. The warm-up points are not replayed first:
    // a noise scale from the few points before this one would make any difference look like a many-sigma spike.
    record(step, a, b);
    result_.diverged = true;
    result_.onset_step = result_.detected_step = step;
    result_.kind = "left_healthy_range";
    result_.detector = "healthy_range";
    result_.sigma = current_sigma();
    result_.magnitude = b - a;
    result_.z = std::numeric_limits<double>::quiet_NaN();  // judged against the range, not against the noise
    return true;
  }

  bool detected = false;
  if (armed_) detected = test(step, a, b);

  if (has_previous_) {
    if (diffs_a_.size() < options_.noise_window) {
      diffs_a_.push_back(a - previous_a_);
      diffs_b_.push_back(b - previous_b_);
    } else {
      diffs_a_[diff_next_] = a - previous_a_;
      diffs_b_[diff_next_] = b - previous_b_;
      diff_next_ = (diff_next_ + 1) % options_.noise_window;
    }
  }
  previous_a_ = a;
  previous_b_ = b;
  has_previous_ = true;
  if (magnitudes_.size() < options_.warmup * 2 + 2) {
    magnitudes_.push_back(std::fabs(a));
    magnitudes_.push_back(std::fabs(b));
  }

  if (!armed_) {
    warmup_points_.push_back({step, a, b, 0});
    if (warmup_points_.size() >= options_.warmup) detected = replay_warmup(step);
  }
  return detected;
}

bool DivergenceDetector::State::test(int64_t step, double a, double b) {
  double sigma = current_sigma();
  double d = b - a;
  double z = d / sigma;
  record(step, a, b);
  if (std::fabs(z) > options_.spike_z) {
    result_.diverged = true;
    result_.onset_step = result_.detected_step = step;
    result_.kind = result_.detector = "spike";
    result_.magnitude = d;
    result_.sigma = sigma;
    result_.z = z;
    spike_pending_ = true;
    return true;
  }
  cusum_.update(z, options_.cusum_k, step);
  if (cusum_.up_exceeds(options_.cusum_h) || cusum_.down_exceeds(options_.cusum_h)) {
    result_.sigma = sigma;
    estimate_onset(step, "cusum");  // provisional, refined after refine_points more points
    refine_remaining_ = options_.refine_points;
    return true;
  }
  return false;
}

void DivergenceDetector::State::estimate_onset(int64_t detected_step, const std::string& detector) {
  // The recent points in order, oldest first; the onset is a step at or before the alarm.
  std::vector<Buffered> pts;
  pts.reserve(recent_.size());
  for (size_t i = 0; i < recent_.size(); ++i) pts.push_back(recent_[(recent_next_ + i) % recent_.size()]);
  const size_t n = pts.size();
  std::vector<double> d(n);
  size_t candidates = 0;
  for (size_t i = 0; i < n; ++i) {
    d[i] = pts[i].b - pts[i].a;
    if (pts[i].step <= detected_step && candidates == i) ++candidates;
  }
  stats::Departure fit = stats::departure_from_zero(d, candidates);
  result_.diverged = true;
  result_.detector = detector;
  result_.detected_step = detected_step;
  result_.onset_step = pts[fit.start].step;
  if (fit.ramp) {
    result_.kind = "drift";
    result_.magnitude = fit.size * static_cast<double>(n - fit.start);  // change accumulated by the detection
  } else {
    result_.kind = pts[fit.start].index < options_.offset_points ? "offset" : "level_shift";
    result_.magnitude = fit.size;
  }
  result_.z = result_.magnitude / result_.sigma;
}

void DivergenceDetector::State::finish() {
  if (!armed_ && !warmup_points_.empty()) replay_warmup(warmup_points_.back().step);
  spike_pending_ = false;
  if (refine_remaining_ > 0) {
    refine_remaining_ = 0;
    estimate_onset(result_.detected_step, result_.detector);
  }
}

}  // namespace rldk
