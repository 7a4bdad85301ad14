// Ordinary least squares for a handful of regressors (a functional-form fit, not a regression package): the
// normal equations solved by Gaussian elimination with partial pivoting, on columns scaled to unit norm so that
// d and d log d of very different sizes do not ruin the conditioning.
#pragma once

#include <optional>
#include <span>
#include <vector>

namespace rldk::stats {

struct LeastSquares {
  std::vector<double> coefficients;  // one per column
  double r2 = 0;                     // 1 - SSE / SST (SST about the mean of y)
  size_t n = 0;
};

// Fits y ~ sum_j coefficients[j] * columns[j] (include a column of ones for an intercept). nullopt when there are
// not more points than columns or the columns are collinear.
std::optional<LeastSquares> least_squares(const std::vector<std::vector<double>>& columns, std::span<const double> y);

}  // namespace rldk::stats
