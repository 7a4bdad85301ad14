// Two-arm tests by design: Welch's t with Hedges' g (seeds), Mann-Whitney U, the paired t test (same items).
// Each follows SciPy's definition so tests/python/test_evals.py can hold it to SciPy.
#include <algorithm>
#include <cmath>
#include <vector>

#include "rldk/evals.h"
#include "stats/correlation.h"
#include "stats/distributions.h"
#include "stats/robust.h"

namespace rldk::evals {

WelchTest welch_t_test(std::span<const double> a, std::span<const double> b, double confidence) {
  WelchTest w;
  w.n_a = a.size();
  w.n_b = b.size();
  w.mean_a = stats::mean(a);
  w.mean_b = stats::mean(b);
  w.difference = w.mean_b - w.mean_a;
  if (a.size() < 2 || b.size() < 2) return w;
  double va = stats::variance(a, 1) / static_cast<double>(a.size());
  double vb = stats::variance(b, 1) / static_cast<double>(b.size());
  double se2 = va + vb;
  if (!(se2 > 0)) return w;
  w.df = se2 * se2 / (va * va / static_cast<double>(a.size() - 1) + vb * vb / static_cast<double>(b.size() - 1));
  double se = std::sqrt(se2);
  w.t = w.difference / se;
  w.p_value = stats::student_t_two_sided_p(w.t, w.df);
  double q = student_t_quantile(1 - (1 - confidence) / 2, w.df);
  w.ci_low = w.difference - q * se;
  w.ci_high = w.difference + q * se;
  return w;
}

EffectSize hedges_g(std::span<const double> a, std::span<const double> b, double confidence) {
  EffectSize e;
  if (a.size() < 2 || b.size() < 2) return e;
  double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
  double pooled = ((na - 1) * stats::variance(a, 1) + (nb - 1) * stats::variance(b, 1)) / (na + nb - 2);
  if (!(pooled > 0)) return e;
  double d = (stats::mean(b) - stats::mean(a)) / std::sqrt(pooled);
  double j = 1 - 3 / (4 * (na + nb) - 9);
  e.value = j * d;
  double se = std::sqrt((na + nb) / (na * nb) + e.value * e.value / (2 * (na + nb)));
  double z = stats::normal_quantile(1 - (1 - confidence) / 2);
  e.ci_low = e.value - z * se;
  e.ci_high = e.value + z * se;
  return e;
}

namespace {

// P(U >= k) under H0 for samples of sizes m and n without ties: the counts of U are the coefficients of the
// Gaussian binomial [m + n choose m]_q = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i).
double exact_u_sf(size_t m, size_t n, double k) {
  if (m > n) std::swap(m, n);
  size_t degree = m * n;
  std::vector<long double> c(degree + 1, 0.0L);
  c[0] = 1;
  size_t current = 0;  // degree of the product so far
  for (size_t i = 1; i <= m; ++i) {
    // times (1 - q^(n+i))
    size_t shift = n + i;
    size_t grown = current + shift;
    for (size_t d = std::min(grown, degree); d >= shift; --d) c[d] -= c[d - shift];
    current = std::min(grown, degree);
    // divided by (1 - q^i): c[d] += c[d - i], ascending (the quotient is a polynomial)
    for (size_t d = i; d <= current; ++d) c[d] += c[d - i];
    current -= i;
  }
  long double total = 0, tail = 0;
  for (size_t d = 0; d <= degree; ++d) {
    total += c[d];
    if (static_cast<double>(d) >= k) tail += c[d];
  }
  return static_cast<double>(tail / total);
}

}  // namespace

MannWhitney mann_whitney_u(std::span<const double> a, std::span<const double> b) {
  MannWhitney r;
  size_t n1 = b.size(), n2 = a.size();  // SciPy's x = b, y = a
  if (n1 == 0 || n2 == 0) return r;
  std::vector<double> all(b.begin(), b.end());
  all.insert(all.end(), a.begin(), a.end());
  std::vector<double> ranks = stats::average_ranks(all);
  double r1 = 0;
  for (size_t i = 0; i < n1; ++i) r1 += ranks[i];
  double dn1 = static_cast<double>(n1), dn2 = static_cast<double>(n2);
  double u1 = r1 - dn1 * (dn1 + 1) / 2;
  double u2 = dn1 * dn2 - u1;
  r.u = u1;
  double u = std::max(u1, u2);
  std::sort(all.begin(), all.end());
  double tie_term = 0;
  bool ties = false;
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    while (j < all.size() && all[j] == all[i]) ++j;
    double t = static_cast<double>(j - i);
    tie_term += t * t * t - t;
    ties |= j - i > 1;
    i = j;
  }
  r.exact = !(n1 > 8 && n2 > 8) && !ties;
  double p;
  if (r.exact) {
    p = 2 * exact_u_sf(n1, n2, u);
  } else {
    double n = dn1 + dn2;
    double s = std::sqrt(dn1 * dn2 / 12 * ((n + 1) - tie_term / (n * (n - 1))));
    double z = (u - dn1 * dn2 / 2 - 0.5) / s;
    p = 2 * stats::normal_sf(z);
  }
  r.p_value = std::clamp(p, 0.0, 1.0);
  return r;
}

PairedTest paired_t_test(std::span<const double> d, double confidence) {
  PairedTest p;
  p.n = d.size();
  p.mean_difference = stats::mean(d);
  if (d.size() < 2) return p;
  p.sd_difference = std::sqrt(stats::variance(d, 1));
  p.df = static_cast<double>(d.size() - 1);
  if (!(p.sd_difference > 0)) return p;
  double se = p.sd_difference / std::sqrt(static_cast<double>(d.size()));
  p.t = p.mean_difference / se;
  p.p_value = stats::student_t_two_sided_p(p.t, p.df);
  double q = student_t_quantile(1 - (1 - confidence) / 2, p.df);
  p.ci_low = p.mean_difference - q * se;
  p.ci_high = p.mean_difference + q * se;
  p.effect_dz = p.mean_difference / p.sd_difference;
  return p;
}

std::vector<double> holm_adjust(std::span<const double> p_values) {
  std::vector<size_t> order;
  for (size_t i = 0; i < p_values.size(); ++i) {
    if (!std::isnan(p_values[i])) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return p_values[x] < p_values[y]; });
  std::vector<double> adjusted(p_values.size(), NA);
  double m = static_cast<double>(order.size()), running = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    running = std::max(running, std::min(1.0, (m - static_cast<double>(k)) * p_values[order[k]]));
    adjusted[order[k]] = running;
  }
  return adjusted;
}

}  // namespace rldk::evals
