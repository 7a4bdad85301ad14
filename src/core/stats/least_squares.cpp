#include "stats/least_squares.h"

#include <cmath>

namespace rldk::stats {

std::optional<LeastSquares> least_squares(const std::vector<std::vector<double>>& columns, std::span<const double> y) {
  size_t k = columns.size(), n = y.size();
  if (k == 0 || n <= k) return std::nullopt;
  std::vector<double> scale(k);
  for (size_t j = 0; j < k; ++j) {
    if (columns[j].size() != n) return std::nullopt;
    double ss = 0;
    for (double v : columns[j]) ss += v * v;
    if (!(ss > 0) || !std::isfinite(ss)) return std::nullopt;
    scale[j] = std::sqrt(ss);
  }
  // Augmented normal equations [X'X | X'y] of the scaled columns.
  std::vector<std::vector<double>> a(k, std::vector<double>(k + 1, 0));
  for (size_t i = 0; i < k; ++i) {
    for (size_t j = 0; j < k; ++j) {
      double s = 0;
      for (size_t r = 0; r < n; ++r) s += columns[i][r] * columns[j][r];
      a[i][j] = s / (scale[i] * scale[j]);
    }
    double s = 0;
    for (size_t r = 0; r < n; ++r) s += columns[i][r] * y[r];
    a[i][k] = s / scale[i];
  }
  for (size_t c = 0; c < k; ++c) {
    size_t pivot = c;
    for (size_t r = c + 1; r < k; ++r) {
      if (std::abs(a[r][c]) > std::abs(a[pivot][c])) pivot = r;
    }
    if (std::abs(a[pivot][c]) < 1e-12) return std::nullopt;  // collinear (the scaled Gram matrix has unit diagonal)
    std::swap(a[c], a[pivot]);
    for (size_t r = 0; r < k; ++r) {
      if (r == c) continue;
      double f = a[r][c] / a[c][c];
      for (size_t j = c; j <= k; ++j) a[r][j] -= f * a[c][j];
    }
  }
  LeastSquares fit;
  fit.n = n;
  for (size_t j = 0; j < k; ++j) fit.coefficients.push_back(a[j][k] / a[j][j] / scale[j]);
  double mean = 0;
  for (double v : y) mean += v;
  mean /= static_cast<double>(n);
  double sse = 0, sst = 0;
  for (size_t r = 0; r < n; ++r) {
    double predicted = 0;
    for (size_t j = 0; j < k; ++j) predicted += fit.coefficients[j] * columns[j][r];
    sse += (y[r] - predicted) * (y[r] - predicted);
    sst += (y[r] - mean) * (y[r] - mean);
  }
  fit.r2 = sst > 0 ? 1 - sse / sst : 0;
  return fit;
}

}  // namespace rldk::stats
