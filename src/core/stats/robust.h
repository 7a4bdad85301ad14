// Robust statistics shared by rules, detectors and comparisons: the one definition of median and MAD in rldk.
// Medians of an even count are the mean of the two middle values (as NumPy and R define them), everywhere.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace rldk::stats {

// Scale of the median absolute deviation that makes it estimate the standard deviation of normal data.
inline constexpr double MAD_TO_SIGMA = 1.4826;
// Mean absolute deviation of normal data times this estimates its standard deviation (sqrt(pi/2)).
inline constexpr double MEAN_ABS_TO_SIGMA = 1.2533;

// Median of v, reordering it. NaN for an empty span.
double median_in_place(std::span<double> v);
// Median and 1.4826 x MAD of v (reordered in place; overwritten with absolute deviations). v must not be empty.
void median_and_sigma(std::span<double> v, double& median, double& sigma);
// Noise scale of a series from its point-to-point differences (1.4826 x MAD of the differences / sqrt 2), so a
// trend does not count as noise. Overwrites v; 0 for fewer than 3 values.
double difference_noise(std::vector<double>& v);

}  // namespace rldk::stats
