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

// The index of the first point after a change in mean (the maximum-likelihood split of x into two constant
// segments, each at least min_segment long). O(n). 0 when x is too short to split.
size_t mean_shift_start(std::span<const double> x, size_t min_segment = 1);

}  // namespace rldk::stats
