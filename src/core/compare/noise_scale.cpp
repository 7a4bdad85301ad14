// Robust noise scales for the first-divergence detector.
#include <algorithm>
#include <cmath>
#include <limits>

#include "rldk/compare.h"
#include "stats/robust.h"

namespace rldk {
namespace {

std::vector<double> finite_only(std::vector<double> values) {
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }),
               values.end());
  return values;
}

}  // namespace

double robust_scale(std::vector<double> values) {
  values = finite_only(std::move(values));
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  double center = 0, sigma = 0;
  stats::median_and_sigma(values, center, sigma);
  return sigma;
}

double first_difference_sigma(const std::vector<double>& values) {
  // First differences remove the run's trend, a constant offset and (but for one point) a level shift, so the scale
  // left is the step-to-step noise (stats::difference_noise).
  std::vector<double> finite = finite_only(values);
  if (finite.size() < 3) return std::numeric_limits<double>::quiet_NaN();  // fewer than 2 differences
  return stats::difference_noise(finite);
}

}  // namespace rldk

namespace rldk {

std::map<std::string, double> replica_noise_sigma(const Run& a, const std::vector<Run>& replicas,
                                                  const std::vector<std::string>& signals) {
  std::map<std::string, double> out;
  for (const auto& name : signals) {
    const Series* sa = a.find(name);
    if (!sa) continue;
    StepValues va = step_values(*sa);
    std::vector<double> diffs;
    for (const auto& r : replicas) {
      const Series* sr = r.find(name);
      if (!sr) continue;
      AlignedPair p = align(va, step_values(*sr));
      for (size_t i = 0; i < p.steps.size(); ++i) diffs.push_back(p.b[i] - p.a[i]);
    }
    double sigma = robust_scale(std::move(diffs));
    if (std::isfinite(sigma) && sigma > 0) out[name] = sigma;
  }
  return out;
}

}  // namespace rldk
