// Student's t distribution function and its inverse, on the incomplete beta of src/core/stats.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "rldk/evals.h"
#include "stats/distributions.h"

namespace rldk::evals {

double student_t_cdf(double t, double df) {
  if (std::isnan(t) || !(df > 0)) return NA;
  if (std::isinf(t)) return t > 0 ? 1.0 : 0.0;
  double tail = 0.5 * stats::incomplete_beta(df / 2, 0.5, df / (df + t * t));  // P(T > |t|)
  return t > 0 ? 1 - tail : tail;
}

double student_t_quantile(double p, double df) {
  if (!(p > 0 && p < 1) || !(df > 0)) return NA;
  if (p == 0.5) return 0;
  // Bracket around the normal quantile (t is wider), then Newton steps kept inside the bracket.
  double lo = -1, hi = 1;
  while (student_t_cdf(lo, df) > p) lo *= 2;
  while (student_t_cdf(hi, df) < p) hi *= 2;
  double x = std::clamp(stats::normal_quantile(p), lo, hi);
  double log_norm = std::lgamma((df + 1) / 2) - std::lgamma(df / 2) - 0.5 * std::log(df * std::numbers::pi);
  for (int i = 0; i < 200; ++i) {
    double f = student_t_cdf(x, df) - p;
    if (f > 0) hi = x; else lo = x;
    double pdf = std::exp(log_norm - (df + 1) / 2 * std::log1p(x * x / df));
    double next = x - f / pdf;
    if (!(next > lo && next < hi)) next = (lo + hi) / 2;
    if (std::fabs(next - x) <= 1e-14 * std::max(1.0, std::fabs(x))) return next;
    x = next;
  }
  return x;
}

}  // namespace rldk::evals
