// Correlation of paired samples with its uncertainty: Pearson and Spearman, a Fisher-z confidence interval and a
// two-sided p-value from Student's t, the same numbers as SciPy's pearsonr / spearmanr. Used where rldk asks "does
// the reward follow X?" (length bias, proxy vs gold) and must say how sure it is.
#pragma once

#include <cstddef>
#include <limits>
#include <span>
#include <vector>

namespace rldk::stats {

// 1-based ranks of x, ties sharing the average of the ranks they span (SciPy: rankdata(method='average')), so
// Spearman stays right on discrete data such as word counts or 0/1 rewards.
std::vector<double> average_ranks(std::span<const double> x);

struct Correlation {
  double r = std::numeric_limits<double>::quiet_NaN();
  size_t n = 0;  // pairs used
  double ci_low = std::numeric_limits<double>::quiet_NaN(), ci_high = std::numeric_limits<double>::quiet_NaN();
  double p_value = std::numeric_limits<double>::quiet_NaN();  // two-sided, H0: no correlation
};

// Inference for a correlation r of n pairs. `lost_df` counts degrees of freedom spent before correlating (one per
// group when values were centred on group means): the t test uses n - 2 - lost_df degrees of freedom and the
// Fisher interval tanh(atanh r +- z / sqrt(n - 3 - lost_df)), z the normal quantile of (1 + confidence) / 2.
// Bounds and p stay NaN where those counts leave no degrees of freedom.
Correlation correlation_inference(double r, size_t n, double confidence = 0.95, size_t lost_df = 0);

// Pearson's r of x and y (equal lengths); NaN when fewer than 2 pairs or either input is constant.
double pearson_r(std::span<const double> x, std::span<const double> y);

// Pearson (SciPy: pearsonr, its confidence_interval()) and Spearman = Pearson of the average ranks (SciPy:
// spearmanr, whose p-value uses the same t approximation), with correlation_inference.
Correlation pearson(std::span<const double> x, std::span<const double> y, double confidence = 0.95,
                    size_t lost_df = 0);
Correlation spearman(std::span<const double> x, std::span<const double> y, double confidence = 0.95,
                     size_t lost_df = 0);

}  // namespace rldk::stats
