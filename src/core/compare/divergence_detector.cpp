// Online first divergence between two aligned runs (see compare.h and docs/compare.md).
#include <algorithm>
#include <cmath>
#include <limits>

#include "rldk/compare.h"

namespace rldk {
namespace {

bool same_non_finite(double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::isinf(a) && std::isinf(b) && std::signbit(a) == std::signbit(b);
}

}  // namespace

DivergenceDetector::DivergenceDetector(DivergenceOptions options) : options_(std::move(options)) {
  options_.noise_window = std::max<size_t>(options_.noise_window, 2);
  options_.onset_window = std::max<size_t>(options_.onset_window, 2);
  if (options_.sigma) {
    armed_ = true;
    result_.sigma_source = "given";
  } else {
    result_.sigma_source = "data";
  }
}

double DivergenceDetector::current_sigma() const {
  double floor = options_.sigma_floor_abs;
  if (!magnitudes_.empty()) {
    std::vector<double> m = magnitudes_;
    std::nth_element(m.begin(), m.begin() + static_cast<std::ptrdiff_t>(m.size() / 2), m.end());
    floor = std::max(floor, options_.sigma_floor_rel * m[m.size() / 2]);
  }
  if (options_.sigma) return std::max(*options_.sigma, floor);
  double sa = robust_scale(diffs_a_) / std::sqrt(2.0);
  double sb = robust_scale(diffs_b_) / std::sqrt(2.0);
  // d = b - a: if both runs carry independent noise of these sizes, d's noise is their root sum of squares.
  double s = std::sqrt((std::isfinite(sa) ? sa * sa : 0.0) + (std::isfinite(sb) ? sb * sb : 0.0));
  return std::max(s, floor);
}

void DivergenceDetector::record(int64_t step, double a, double b) {
  Buffered point{step, a, b, tested_++};
  if (recent_.size() < options_.onset_window) {
    recent_.push_back(point);
  } else {
    recent_[recent_next_] = point;
    recent_next_ = (recent_next_ + 1) % options_.onset_window;
  }
}

bool DivergenceDetector::push(int64_t step, double a, double b) {
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
      armed_ = true;
      auto buffered = std::move(warmup_points_);
      warmup_points_.clear();
      for (const auto& p : buffered) {
        if (result_.diverged) {
          if (spike_pending_ || refine_remaining_ > 0) push(p.step, p.a, p.b);  // classify / refine
          continue;
        }
        if (test(p.step, p.a, p.b)) result_.detected_step = step;
      }
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
    warmup_points_.push_back({step, a, b});
    if (warmup_points_.size() >= options_.warmup) {
      armed_ = true;
      auto buffered = std::move(warmup_points_);
      warmup_points_.clear();
      for (const auto& p : buffered) {
        if (result_.diverged) {
          if (spike_pending_ || refine_remaining_ > 0) push(p.step, p.a, p.b);  // classify / refine
          continue;
        }
        if (test(p.step, p.a, p.b)) {
          result_.detected_step = step;  // the detector could only know once its warm-up ended
          detected = true;
        }
      }
    }
  }
  return detected;
}

bool DivergenceDetector::test(int64_t step, double a, double b) {
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
  cusum_pos_ = std::max(0.0, cusum_pos_ + z - options_.cusum_k);
  cusum_neg_ = std::max(0.0, cusum_neg_ - z - options_.cusum_k);
  if (cusum_pos_ > options_.cusum_h || cusum_neg_ > options_.cusum_h) {
    result_.sigma = sigma;
    estimate_onset(step, "cusum");  // provisional, refined after refine_points more points
    refine_remaining_ = options_.refine_points;
    return true;
  }
  return false;
}

void DivergenceDetector::estimate_onset(int64_t detected_step, const std::string& detector) {
  // The recent points in order, oldest first.
  std::vector<Buffered> pts;
  pts.reserve(recent_.size());
  for (size_t i = 0; i < recent_.size(); ++i) pts.push_back(recent_[(recent_next_ + i) % recent_.size()]);
  size_t n = pts.size();
  // Least squares over the change point tau, under the null that d = 0 before it: a step model (d = mu after tau)
  // and a ramp model (d = beta * (i - tau + 1) after tau). O(n) per model with prefix sums; runs once per signal.
  std::vector<double> s(n + 1, 0.0), s2(n + 1, 0.0), si(n + 1, 0.0);
  for (size_t i = 0; i < n; ++i) {
    double d = pts[i].b - pts[i].a;
    s[i + 1] = s[i] + d;
    s2[i + 1] = s2[i] + d * d;
    si[i + 1] = si[i] + static_cast<double>(i) * d;
  }
  double best_sse = std::numeric_limits<double>::infinity();
  size_t best_tau = n - 1;
  bool best_ramp = false;
  double best_param = 0.0;
  for (size_t tau = 0; tau < n; ++tau) {
    if (pts[tau].step > detected_step) break;  // points after the alarm refine the fit, never move the onset past it
    double m = static_cast<double>(n - tau);
    double sum = s[n] - s[tau];
    double sum2 = s2[n] - s2[tau];
    double before = s2[tau];
    double mu = sum / m;
    double sse_step = before + sum2 - sum * mu;
    if (sse_step < best_sse) {
      best_sse = sse_step;
      best_tau = tau;
      best_ramp = false;
      best_param = mu;
    }
    // r_i = i - tau + 1 for i >= tau: sum r d = sum i d - (tau - 1) sum d; sum r^2 = m (m + 1) (2m + 1) / 6.
    double srd = (si[n] - si[tau]) - (static_cast<double>(tau) - 1.0) * sum;
    double srr = m * (m + 1.0) * (2.0 * m + 1.0) / 6.0;
    double beta = srd / srr;
    double sse_ramp = before + sum2 - beta * srd;
    if (sse_ramp < best_sse) {
      best_sse = sse_ramp;
      best_tau = tau;
      best_ramp = true;
      best_param = beta;
    }
  }
  result_.diverged = true;
  result_.detector = detector;
  result_.detected_step = detected_step;
  result_.onset_step = pts[best_tau].step;
  if (best_ramp) {
    result_.kind = "drift";
    result_.magnitude = best_param * static_cast<double>(n - best_tau);  // change accumulated by the detection
  } else {
    result_.kind = pts[best_tau].index < options_.offset_points ? "offset" : "level_shift";
    result_.magnitude = best_param;
  }
  result_.z = result_.magnitude / result_.sigma;
}

void DivergenceDetector::finish() {
  if (!armed_ && !warmup_points_.empty()) {
    armed_ = true;
    auto buffered = std::move(warmup_points_);
    warmup_points_.clear();
    int64_t last = buffered.back().step;
    for (const auto& p : buffered) {
      if (result_.diverged) {
        if (spike_pending_ || refine_remaining_ > 0) push(p.step, p.a, p.b);  // classify / refine
        continue;
      }
      if (test(p.step, p.a, p.b)) result_.detected_step = last;
    }
  }
  spike_pending_ = false;
  if (refine_remaining_ > 0) {
    refine_remaining_ = 0;
    estimate_onset(result_.detected_step, result_.detector);
  }
}

}  // namespace rldk
