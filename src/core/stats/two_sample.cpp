#include "stats/two_sample.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "stats/distributions.h"
#include "stats/radix_sort.h"

namespace rldk::stats {
namespace {

// Walks the merged order of two sorted samples, calling visit(x, next_x, F_a, F_b) after every distinct value x
// with both empirical CDFs evaluated at x (right-continuous), and next_x the following distinct value (or x at the
// end).
template <class Visit>
void walk_cdfs(const std::vector<double>& a, const std::vector<double>& b, Visit visit) {
  size_t i = 0, j = 0;
  double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
  while (i < a.size() || j < b.size()) {
    double x = j == b.size() || (i < a.size() && a[i] <= b[j]) ? a[i] : b[j];
    while (i < a.size() && a[i] == x) ++i;
    while (j < b.size() && b[j] == x) ++j;
    double next = x;
    if (i < a.size() || j < b.size()) {
      next = j == b.size() || (i < a.size() && a[i] <= b[j]) ? a[i] : b[j];
    }
    visit(x, next, static_cast<double>(i) / na, static_cast<double>(j) / nb);
  }
}

}  // namespace

KolmogorovSmirnov ks_two_sample(std::span<const double> a, std::span<const double> b) {
  KolmogorovSmirnov r;
  r.n_a = a.size();
  r.n_b = b.size();
  if (a.empty() || b.empty()) return r;
  std::vector<double> sa(a.begin(), a.end()), sb(b.begin(), b.end());
  sort_values(sa);
  sort_values(sb);
  double d = 0;
  walk_cdfs(sa, sb, [&](double, double, double fa, double fb) { d = std::max(d, std::fabs(fa - fb)); });
  r.statistic = d;
  double na = static_cast<double>(r.n_a), nb = static_cast<double>(r.n_b);
  r.p_value = std::clamp(kolmogorov_sf(std::sqrt(na * nb / (na + nb)) * d), 0.0, 1.0);
  return r;
}

double wasserstein_distance(std::span<const double> a, std::span<const double> b) {
  if (a.empty() || b.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::vector<double> sa(a.begin(), a.end()), sb(b.begin(), b.end());
  sort_values(sa);
  sort_values(sb);
  double area = 0;
  walk_cdfs(sa, sb, [&](double x, double next, double fa, double fb) { area += std::fabs(fa - fb) * (next - x); });
  return area;
}

}  // namespace rldk::stats
