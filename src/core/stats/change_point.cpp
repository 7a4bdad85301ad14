#include "stats/change_point.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "stats/robust.h"

namespace rldk::stats {

size_t ramp_start(std::span<const double> x, size_t min_after) {
  const size_t n = x.size();
  if (n < 3) return 0;
  min_after = std::max<size_t>(min_after, 1);
  // Values relative to the first point keep the sums precise on large levels (token counts, memory in bytes).
  const double origin = x[0];
  double sx = 0, sxx = 0;
  for (double v : x) {
    sx += v - origin;
    sxx += (v - origin) * (v - origin);
  }
  const double count = static_cast<double>(n);
  const double var_x = sxx - sx * sx / count;
  double best_sse = std::numeric_limits<double>::infinity();
  size_t best = 0;
  // c = -1 is a line through every point; c = n - 1 - min_after leaves min_after points on the slope.
  for (long c = -1; c + static_cast<long>(min_after) < static_cast<long>(n); ++c) {
    double su = 0, suu = 0, sux = 0;
    for (size_t i = static_cast<size_t>(c + 1); i < n; ++i) {
      double u = static_cast<double>(static_cast<long>(i) - c);
      double v = x[i] - origin;
      su += u;
      suu += u * u;
      sux += u * v;
    }
    double var_u = suu - su * su / count, cov = sux - su * sx / count;
    double sse = var_u > 0 ? var_x - cov * cov / var_u : var_x;
    // Strictly smaller: among equal fits the earliest start wins, so a clean step is dated at its first point.
    if (std::isinf(best_sse) || sse < best_sse - 1e-12 * std::max(1.0, std::fabs(best_sse))) {
      best_sse = sse;
      best = static_cast<size_t>(c + 1);
    }
  }
  return best;
}

size_t ramp_start_levelling(std::span<const double> x, size_t min_after) {
  const size_t n = x.size();
  if (n < 3) return 0;
  min_after = std::max<size_t>(min_after, 1);
  // Prefix sums over i of 1, i, i^2, v and i v (v relative to the first point, as in ramp_start), so that the sums
  // of u, u^2 and u v over the ramp [c1 + 1, c2) and the top [c2, n) of each candidate are O(1).
  const double origin = x[0];
  std::vector<double> s1(n + 1, 0), s2(n + 1, 0), sv(n + 1, 0), siv(n + 1, 0);
  double sxx = 0;
  for (size_t i = 0; i < n; ++i) {
    double fi = static_cast<double>(i), v = x[i] - origin;
    s1[i + 1] = s1[i] + fi;
    s2[i + 1] = s2[i] + fi * fi;
    sv[i + 1] = sv[i] + v;
    siv[i + 1] = siv[i] + fi * v;
    sxx += v * v;
  }
  const double count = static_cast<double>(n), sx = sv[n];
  const double var_x = sxx - sx * sx / count;
  double best_sse = std::numeric_limits<double>::infinity();
  size_t best = 0;
  for (long c1 = -1; c1 + static_cast<long>(min_after) < static_cast<long>(n); ++c1) {
    const double c = static_cast<double>(c1);
    const size_t ramp_begin = static_cast<size_t>(c1 + 1);
    for (size_t c2 = ramp_begin; c2 <= n; ++c2) {
      // Ramp: i in [ramp_begin, c2), u = i - c1. Top: i in [c2, n), u = c2 - c1 (c2 = ramp_begin: a step).
      double k = static_cast<double>(c2 - ramp_begin);
      double r1 = s1[c2] - s1[ramp_begin], r2 = s2[c2] - s2[ramp_begin];
      double rv = sv[c2] - sv[ramp_begin], riv = siv[c2] - siv[ramp_begin];
      double top = static_cast<double>(n - c2), level = static_cast<double>(c2) - c;
      double su = (r1 - c * k) + level * top;
      double suu = (r2 - 2 * c * r1 + c * c * k) + level * level * top;
      double sux = (riv - c * rv) + level * (sv[n] - sv[c2]);
      double var_u = suu - su * su / count, cov = sux - su * sx / count;
      double sse = var_u > 0 ? var_x - cov * cov / var_u : var_x;
      // Strictly smaller: among equal fits the earliest start wins, as in ramp_start.
      if (std::isinf(best_sse) || sse < best_sse - 1e-12 * std::max(1.0, std::fabs(best_sse))) {
        best_sse = sse;
        best = ramp_begin;
      }
    }
  }
  return best;
}

size_t mean_shift_start(std::span<const double> x, size_t min_segment) {
  const size_t n = x.size();
  min_segment = std::max<size_t>(min_segment, 1);
  if (n < 2 * min_segment) return 0;
  const double origin = x[0];
  double total = 0;
  for (double v : x) total += v - origin;
  // Maximising the between-segment sum of squares k (n-k)/n (mean_left - mean_right)^2 is the least-squares split.
  double left = 0, best_score = -1;
  size_t best = 0;
  for (size_t k = 1; k < n; ++k) {
    left += x[k - 1] - origin;
    if (k < min_segment || n - k < min_segment) continue;
    double kl = static_cast<double>(k), kr = static_cast<double>(n - k);
    double diff = left / kl - (total - left) / kr;
    double score = kl * kr * diff * diff;
    if (score > best_score) {
      best_score = score;
      best = k;
    }
  }
  return best;
}

namespace {
// A least-squares line through y[0..m-1] at x = 0..m-1: its value at `at`, the variance factor of that value
// (variance / sigma^2: 1/m + (at - mean x)^2 / Sxx) and the residuals appended to `residuals`.
// (stats::linear_fit also tests its slope with Student's t, which is not wanted for every candidate split.)
double line_value_at(std::span<const double> y, double at, double& variance_factor, std::vector<double>& residuals) {
  const double m = static_cast<double>(y.size()), mean_x = (m - 1) / 2;
  double mean_y = 0;
  for (double v : y) mean_y += v;
  mean_y /= m;
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    double dx = static_cast<double>(i) - mean_x;
    sxx += dx * dx;
    sxy += dx * (y[i] - mean_y);
  }
  double slope = sxx > 0 ? sxy / sxx : 0;
  for (size_t i = 0; i < y.size(); ++i) {
    residuals.push_back(y[i] - (mean_y + slope * (static_cast<double>(i) - mean_x)));
  }
  variance_factor = 1 / m + (sxx > 0 ? (at - mean_x) * (at - mean_x) / sxx : 0);
  return mean_y + slope * (at - mean_x);
}
}  // namespace

Jump largest_jump(std::span<const double> x, size_t min_before, size_t min_after, size_t window, double min_scale) {
  const size_t n = x.size();
  min_before = std::max<size_t>(min_before, 2);
  min_after = std::max<size_t>(min_after, 2);
  window = std::max({window, min_before, min_after});
  Jump best;
  if (n < min_before + min_after) return best;
  std::vector<double> residuals, scratch;
  residuals.reserve(2 * window);
  for (size_t c = min_before; c + min_after <= n; ++c) {
    size_t left_begin = c - std::min(c, window), right_end = std::min(n, c + window);
    residuals.clear();
    double left_factor = 0, right_factor = 0;
    double left = line_value_at(x.subspan(left_begin, c - left_begin), static_cast<double>(c - left_begin),
                                left_factor, residuals);
    double right = line_value_at(x.subspan(c, right_end - c), 0, right_factor, residuals);
    double median = 0, sigma = 0;
    median_and_sigma(residuals, median, sigma);
    sigma = std::max(sigma, min_scale);
    if (!(sigma > 0)) continue;
    double z = (right - left) / (sigma * std::sqrt(left_factor + right_factor));
    if (!(z > best.z)) continue;
    scratch.assign(x.begin() + static_cast<std::ptrdiff_t>(c), x.begin() + static_cast<std::ptrdiff_t>(c + min_after));
    double after = median_in_place(scratch);
    scratch.assign(x.begin() + static_cast<std::ptrdiff_t>(c - std::min(c, min_after)),
                   x.begin() + static_cast<std::ptrdiff_t>(c));
    best = {c, right - left, z, (right - left) / sigma, after - median_in_place(scratch)};
  }
  return best;
}

Departure departure_from_zero(std::span<const double> d, size_t candidates) {
  const size_t n = d.size();
  Departure best;
  best.start = n == 0 ? 0 : n - 1;
  std::vector<double> s(n + 1, 0.0), s2(n + 1, 0.0), si(n + 1, 0.0);
  for (size_t i = 0; i < n; ++i) {
    s[i + 1] = s[i] + d[i];
    s2[i + 1] = s2[i] + d[i] * d[i];
    si[i + 1] = si[i] + static_cast<double>(i) * d[i];
  }
  double best_sse = std::numeric_limits<double>::infinity();
  for (size_t tau = 0; tau < std::min(candidates, n); ++tau) {
    double m = static_cast<double>(n - tau);
    double sum = s[n] - s[tau];
    double sum2 = s2[n] - s2[tau];
    double before = s2[tau];
    double mu = sum / m;
    double sse_step = before + sum2 - sum * mu;
    if (sse_step < best_sse) {
      best_sse = sse_step;
      best = {tau, false, mu};
    }
    // r_i = i - tau + 1 for i >= tau: sum r d = sum i d - (tau - 1) sum d; sum r^2 = m (m + 1) (2m + 1) / 6.
    double srd = (si[n] - si[tau]) - (static_cast<double>(tau) - 1.0) * sum;
    double srr = m * (m + 1.0) * (2.0 * m + 1.0) / 6.0;
    double beta = srd / srr;
    double sse_ramp = before + sum2 - beta * srd;
    if (sse_ramp < best_sse) {
      best_sse = sse_ramp;
      best = {tau, true, beta};
    }
  }
  return best;
}

}  // namespace rldk::stats
