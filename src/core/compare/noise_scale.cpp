// Robust noise scales for the first-divergence detector.
#include <algorithm>
#include <cmath>
#include <limits>

#include "rldk/compare.h"

namespace rldk {
namespace {

// 1 / Phi^-1(3/4): makes the MAD a consistent estimate of the standard deviation for Gaussian noise.
constexpr double MAD_TO_SIGMA = 1.4826;

double median_in_place(std::vector<double>& v) {
  size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  double upper = v[mid];
  if (v.size() % 2 == 1) return upper;
  double lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return 0.5 * (lower + upper);
}

}  // namespace

double robust_scale(std::vector<double> values) {
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }),
               values.end());
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  double center = median_in_place(values);
  for (double& v : values) v = std::fabs(v - center);
  return MAD_TO_SIGMA * median_in_place(values);
}

double first_difference_sigma(const std::vector<double>& values) {
  // First differences remove the run's trend, a constant offset and (but for one point) a level shift, so the scale
  // left is the step-to-step noise. The difference of two independent noisy points has twice the variance.
  std::vector<double> diffs;
  bool has_previous = false;
  double previous = 0.0;
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    if (has_previous) diffs.push_back(v - previous);
    previous = v;
    has_previous = true;
  }
  if (diffs.size() < 2) return std::numeric_limits<double>::quiet_NaN();
  return robust_scale(std::move(diffs)) / std::sqrt(2.0);
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
