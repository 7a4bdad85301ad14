#include "stats/distributions.h"

#include <cmath>
#include <limits>
#include <numbers>

namespace rldk::stats {
namespace {

constexpr double NaN = std::numeric_limits<double>::quiet_NaN();

// Continued fraction of I_x(a, b) (Numerical Recipes' betacf, modified Lentz), valid where x < (a + 1) / (a + b + 2).
double beta_continued_fraction(double a, double b, double x) {
  constexpr int MAX_TERMS = 500;
  constexpr double EPS = 1e-16;
  constexpr double TINY = 1e-300;  // keeps Lentz's denominators away from zero
  double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  if (std::fabs(d) < TINY) d = TINY;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= MAX_TERMS; ++m) {
    double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < TINY) d = TINY;
    c = 1 + aa / c;
    if (std::fabs(c) < TINY) c = TINY;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < TINY) d = TINY;
    c = 1 + aa / c;
    if (std::fabs(c) < TINY) c = TINY;
    d = 1 / d;
    double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < EPS) break;
  }
  return h;
}

}  // namespace

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::numbers::sqrt2); }
double normal_sf(double z) { return 0.5 * std::erfc(z / std::numbers::sqrt2); }

double normal_quantile(double p) {
  if (!(p > 0 && p < 1)) return NaN;
  // Acklam's coefficients (relative error 1.15e-9), then one Halley step.
  static constexpr double A[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                                 1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double B[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                 6.680131188771972e+01,  -1.328068155288572e+01};
  static constexpr double C[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                 -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double D[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                 3.754408661907416e+00};
  constexpr double P_LOW = 0.02425;
  double x;
  if (p < P_LOW) {
    double q = std::sqrt(-2 * std::log(p));
    x = (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5]) /
        ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1);
  } else if (p <= 1 - P_LOW) {
    double q = p - 0.5, r = q * q;
    x = (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q /
        (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1);
  } else {
    double q = std::sqrt(-2 * std::log(1 - p));
    x = -(((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5]) /
        ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1);
  }
  double e = normal_cdf(x) - p;
  double u = e * std::sqrt(2 * std::numbers::pi) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

double incomplete_beta(double a, double b, double x) {
  if (!(a > 0 && b > 0) || !(x >= 0 && x <= 1)) return NaN;
  if (x == 0 || x == 1) return x;
  double log_front = std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  double front = std::exp(log_front);
  // The fraction converges quickly only below the mean; above it, use I_x(a, b) = 1 - I_{1-x}(b, a).
  if (x < (a + 1) / (a + b + 2)) return front * beta_continued_fraction(a, b, x) / a;
  return 1 - front * beta_continued_fraction(b, a, 1 - x) / b;
}

double student_t_two_sided_p(double t, double df) {
  if (std::isnan(t) || !(df > 0)) return NaN;
  if (std::isinf(t)) return 0;
  // P(|T| >= |t|) = I_{df / (df + t^2)}(df / 2, 1 / 2).
  return incomplete_beta(df / 2, 0.5, df / (df + t * t));
}

double kolmogorov_sf(double z) {
  if (std::isnan(z)) return NaN;
  if (z <= 0) return 1;
  constexpr int TERMS = 100;
  // Two series for the same function; each converges in a handful of terms on its side of z ~ 1.
  if (z < 1) {
    // P(K <= z) = sqrt(2 pi) / z * sum_{k>=1} exp(-(2k - 1)^2 pi^2 / (8 z^2)).
    double sum = 0;
    for (int k = 1; k <= TERMS; ++k) {
      double term = std::exp(-(2.0 * k - 1) * (2.0 * k - 1) * std::numbers::pi * std::numbers::pi / (8 * z * z));
      sum += term;
      if (term < 1e-17 * sum) break;
    }
    return 1 - std::sqrt(2 * std::numbers::pi) / z * sum;
  }
  // P(K > z) = 2 sum_{k>=1} (-1)^(k-1) exp(-2 k^2 z^2).
  double sum = 0;
  for (int k = 1; k <= TERMS; ++k) {
    double term = std::exp(-2.0 * k * k * z * z);
    sum += (k % 2 == 1 ? term : -term);
    if (term < 1e-17) break;
  }
  return std::fmin(1.0, 2 * sum);
}

}  // namespace rldk::stats
