#include "stats/robust.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rldk::stats {

double mean(std::span<const double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  double sum = 0;
  for (double e : v) sum += e;
  return sum / static_cast<double>(v.size());
}

double variance(std::span<const double> v, int ddof) {
  if (ddof < 0 || v.size() <= static_cast<size_t>(ddof)) return std::numeric_limits<double>::quiet_NaN();
  double m = mean(v), squares = 0;
  for (double e : v) squares += (e - m) * (e - m);
  return squares / static_cast<double>(v.size() - static_cast<size_t>(ddof));
}

double quantile_sorted(std::span<const double> sorted, double q) {
  if (sorted.empty()) return std::numeric_limits<double>::quiet_NaN();
  double pos = q * static_cast<double>(sorted.size() - 1);
  auto lower = static_cast<size_t>(std::floor(pos));
  if (lower + 1 >= sorted.size()) return sorted.back();
  double frac = pos - static_cast<double>(lower);
  return sorted[lower] + frac * (sorted[lower + 1] - sorted[lower]);
}

double median_in_place(std::span<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  double upper = *mid;
  if (v.size() % 2 == 1) return upper;
  // After nth_element every element before mid is <= *mid: the lower middle is their maximum.
  double lower = *std::max_element(v.begin(), mid);
  return lower + (upper - lower) / 2;
}

void median_and_sigma(std::span<double> v, double& median, double& sigma) {
  median = median_in_place(v);
  for (double& e : v) e = std::fabs(e - median);
  sigma = MAD_TO_SIGMA * median_in_place(v);
}

double difference_noise(std::vector<double>& v) {
  if (v.size() < 3) return 0;
  for (size_t i = 0; i + 1 < v.size(); ++i) v[i] = v[i + 1] - v[i];
  v.pop_back();
  double median = 0, sigma = 0;
  median_and_sigma(v, median, sigma);
  return sigma / std::sqrt(2.0);
}

double second_difference_noise(std::span<const double> v, std::vector<double>& scratch) {
  // Variance of x[i] - 2 x[i-1] + x[i-2] for independent noise: (1 + 4 + 1) sigma^2.
  constexpr double SECOND_DIFFERENCE_VARIANCE = 6.0;
  scratch.clear();
  for (size_t i = 2; i < v.size(); ++i) scratch.push_back(v[i] - 2 * v[i - 1] + v[i - 2]);
  if (scratch.size() < 2) return 0;
  double median = 0, sigma = 0;
  median_and_sigma(scratch, median, sigma);
  return sigma / std::sqrt(SECOND_DIFFERENCE_VARIANCE);
}

}  // namespace rldk::stats
