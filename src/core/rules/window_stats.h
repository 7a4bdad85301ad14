// The numeric definitions behind the window functions of rule expressions (docs/rule-language.md lists them).
// One rule for bad data, applied everywhere: non-finite elements (NaN, +-inf) are skipped, and a statistic of no
// finite elements is NaN, which no comparison accepts. zscore and robust_z are the exception where the latest
// element is the subject: a non-finite latest element gives NaN.
#pragma once

#include <cstdint>
#include <span>

namespace rldk::rules {

// robust_z divides by at least this times max(1, |median|): a window whose values are (nearly) all equal has
// MAD 0, and any departure of the latest value from it should read as a very large score, not as inf or NaN.
inline constexpr double ROBUST_Z_MIN_SCALE = 1e-9;

double window_sum(std::span<const double> xs);
double window_mean(std::span<const double> xs);
double window_median(std::span<const double> xs);
double window_min(std::span<const double> xs);
double window_max(std::span<const double> xs);
// Population variance (divides by the number of finite elements) and its square root.
double window_variance(std::span<const double> xs);
double window_stddev(std::span<const double> xs);
double window_first(std::span<const double> xs);
double window_last(std::span<const double> xs);
// last - first.
double window_delta(std::span<const double> xs);
// (last - first) / |first|; NaN when first is 0.
double window_pct_change(std::span<const double> xs);
// Least-squares slope of xs against steps (same length; pairs with a non-finite x are skipped). NaN with fewer
// than two points or when all their steps are equal.
double window_slope(std::span<const double> xs, std::span<const int64_t> steps);
// s = first; s = alpha * x + (1 - alpha) * s for each later element; NaN unless 0 < alpha <= 1.
double window_ewma(std::span<const double> xs, double alpha);
// (latest - mean) / stddev; 0 when stddev is 0 (then the latest equals the mean).
double window_zscore(std::span<const double> xs);
// (latest - median) / max(stats::MAD_TO_SIGMA * MAD, ROBUST_Z_MIN_SCALE * max(1, |median|)).
double window_robust_z(std::span<const double> xs);

}  // namespace rldk::rules
