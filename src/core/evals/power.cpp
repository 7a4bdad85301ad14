// Power of the two-arm tests and the number of seeds or items they need (Colas, Sigaud, Oudeyer 2018, "How Many
// Random Seeds?", compute_beta; methods.md §1.2).
#include <algorithm>
#include <cmath>

#include "rldk/evals.h"

namespace rldk::evals {

double welch_power(double effect, double sd_a, double sd_b, size_t n, double alpha, bool two_sided) {
  if (n < 2 || !(sd_a >= 0 && sd_b >= 0) || !(sd_a + sd_b > 0) || !(alpha > 0 && alpha < 1)) return NA;
  double va = sd_a * sd_a, vb = sd_b * sd_b, nn = static_cast<double>(n);
  double nu = (va + vb) * (va + vb) * (nn - 1) / (va * va + vb * vb);
  double t_effect = std::fabs(effect) / std::sqrt((va + vb) / nn);
  double t_crit = student_t_quantile(1 - (two_sided ? alpha / 2 : alpha), nu);
  return 1 - student_t_cdf(t_crit - t_effect, nu);
}

namespace {

// Power grows with n: double to bracket the answer, then bisect.
template <class Power>
size_t smallest_n(Power power_at, double power, size_t max_n) {
  size_t lo = 1, hi = 2;
  while (true) {
    double p = power_at(hi);
    if (std::isnan(p)) return 0;
    if (p >= power) break;
    if (hi >= max_n) return 0;
    lo = hi;
    hi = std::min(max_n, hi * 2);
  }
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (power_at(mid) >= power) hi = mid; else lo = mid;
  }
  return hi;
}

}  // namespace

size_t seeds_needed(double effect, double sd_a, double sd_b, double alpha, double power, bool two_sided,
                    size_t max_n) {
  if (!(std::fabs(effect) > 0)) return 0;
  return smallest_n([&](size_t n) { return welch_power(effect, sd_a, sd_b, n, alpha, two_sided); }, power, max_n);
}

double paired_power(double effect, double sd_d, size_t n, double alpha, bool two_sided) {
  if (n < 2 || !(sd_d > 0) || !(alpha > 0 && alpha < 1)) return NA;
  double nn = static_cast<double>(n), nu = nn - 1;
  double t_effect = std::fabs(effect) / (sd_d / std::sqrt(nn));
  double t_crit = student_t_quantile(1 - (two_sided ? alpha / 2 : alpha), nu);
  return 1 - student_t_cdf(t_crit - t_effect, nu);
}

size_t items_needed(double effect, double sd_d, double alpha, double power, bool two_sided, size_t max_n) {
  if (!(std::fabs(effect) > 0)) return 0;
  return smallest_n([&](size_t n) { return paired_power(effect, sd_d, n, alpha, two_sided); }, power, max_n);
}

}  // namespace rldk::evals
