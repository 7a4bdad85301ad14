// Where a change began: fitted change points for onsets. A finding's onset is the start of the change, not the
// point where a statistic finally crossed its threshold; these estimate that start from the values seen.
#pragma once

#include <cstddef>
#include <span>

namespace rldk::stats {

// The index of the first changed point under a "flat, then linear" (hinge) model a + b * max(0, i - c), fitted by
// least squares over every c from -1 (a ramp from the first point) to n - 1 - min_after; returns c + 1. A step is
// a steep hinge, so this dates steps and ramps alike. O(n^2): for the one call when an episode opens, on a
// bounded window. 0 for fewer than 3 points.
size_t ramp_start(std::span<const double> x, size_t min_after = 1);

// As ramp_start, for a change that may level off again: "flat, then linear, then flat" (a + b * clamp(i - c1, 0,
// c2 - c1)), fitted by least squares over every c1 (as ramp_start's c) and every top c2 after it, up to the last point
// (where it is ramp_start's hinge); returns c1 + 1. A hinge fitted to a jump that then holds its new level (a KL
// flat at 0.5 for 31 steps, at 2.0 from step 36) tilts its line to pass through the plateau and starts it too early
// (step 22); this model dates the jump. O(n^2) with prefix sums: for the one call when a finding is made.
size_t ramp_start_levelling(std::span<const double> x, size_t min_after = 1);

// The index of the first point after a change in mean (the maximum-likelihood split of x into two constant
// segments, each at least min_segment long). O(n). 0 when x is too short to split.
size_t mean_shift_start(std::span<const double> x, size_t min_segment = 1);

// The largest upward jump in a series seen whole (a regression discontinuity): for each split c with at least
// `min_before` points before it and `min_after` from it on, a least-squares line through up to `window` points on
// each side, the gap between the right line's value at c and the left line extrapolated to c, and that gap in
// standard errors (the pooled robust scale of both fits' residuals, times the standard error of the two lines'
// values at c; at least `min_scale`). A smooth curve that rises and levels off (KL as the policy leaves its reference) leaves small or
// negative gaps, because the left line follows its slope; a step leaves one gap many errors wide. `held` is the
// median of the `min_after` points from c on minus the median of the up to `min_after` points before it: a single
// wild point pulls one line's end but not that median. Pass -x for downward jumps. O(n x window).
struct Jump {
  size_t index = 0;  // the first point after the jump
  double gap = 0;    // working units
  double z = 0;      // the gap in standard errors; 0 when no split fits
  double sigmas = 0; // the gap in noise sigmas (the pooled robust scale of the residuals)
  double held = 0;   // working units
};
Jump largest_jump(std::span<const double> x, size_t min_before, size_t min_after, size_t window, double min_scale);

// How a series that should be zero (the difference between two runs) departed from it: the least-squares change
// point under a step model (d = size from `start` on) and a ramp model (d = size x (i - start + 1) from `start` on),
// both zero before it. Only the first `candidates` indices may be the start (points after an alarm refine the fit
// but never move the start past it). O(n) with prefix sums. With no candidate: start n - 1, size 0.
struct Departure {
  size_t start = 0;
  bool ramp = false;  // a ramp fitted better than a step
  double size = 0;    // the step's level, or the ramp's slope per point
};
Departure departure_from_zero(std::span<const double> d, size_t candidates);

}  // namespace rldk::stats
