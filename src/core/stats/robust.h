// Robust statistics shared by rules, detectors and comparisons: the one definition of median and MAD in rldk.
// Medians of an even count are the mean of the two middle values (as NumPy and R define them), everywhere.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

namespace rldk::stats {

// Scale of the median absolute deviation that makes it estimate the standard deviation of normal data.
inline constexpr double MAD_TO_SIGMA = 1.4826;
// Mean absolute deviation of normal data times this estimates its standard deviation (sqrt(pi/2)).
inline constexpr double MEAN_ABS_TO_SIGMA = 1.2533;

// Arithmetic mean of v. NaN for an empty span.
double mean(std::span<const double> v);
// Variance of v about its mean with `ddof` delta degrees of freedom (NumPy's var(ddof=...)): 0 for the population,
// 1 for the unbiased sample variance. NaN when v has no more than ddof values.
double variance(std::span<const double> v, int ddof);
// Median of v, reordering it. NaN for an empty span.
double median_in_place(std::span<double> v);
// Median of three values, without a buffer (a smoothed level over the last three points).
inline double median_of_three(double a, double b, double c) {
  return std::max(std::min(a, b), std::min(std::max(a, b), c));
}
// The q-quantile (0 <= q <= 1) of ascending `sorted` with linear interpolation between order statistics, as
// NumPy's default quantile(method='linear'). NaN for an empty span.
double quantile_sorted(std::span<const double> sorted, double q);
// Median and 1.4826 x MAD of v (reordered in place; overwritten with absolute deviations). v must not be empty.
void median_and_sigma(std::span<double> v, double& median, double& sigma);
// Noise scale of a series from its point-to-point differences (1.4826 x MAD of the differences / sqrt 2), so a
// trend does not count as noise. Overwrites v; 0 for fewer than 3 values.
double difference_noise(std::vector<double>& v);
// Noise scale of sparse points (evals far apart) from their second differences x[i] - 2 x[i-1] + x[i-2], which cancel
// a locally linear trend: 1.4826 x MAD of the second differences / sqrt 6 (a second difference of independent noise
// has 6 times its variance). `scratch` holds the differences; 0 for fewer than 2 of them (4 values).
double second_difference_noise(std::span<const double> v, std::vector<double>& scratch);

}  // namespace rldk::stats
