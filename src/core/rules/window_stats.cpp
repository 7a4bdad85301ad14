#include "rules/window_stats.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "stats/robust.h"

namespace rldk::rules {
namespace {

constexpr double NOT_A_NUMBER = std::numeric_limits<double>::quiet_NaN();

// Windows up to this size are copied to the stack for median and robust_z, so typical rules allocate nothing.
constexpr size_t STACK_WINDOW = 128;

// The finite elements of a window in a scratch buffer that median may reorder.
class FiniteCopy {
 public:
  explicit FiniteCopy(std::span<const double> xs) {
    double* out = small_.data();
    if (xs.size() > small_.size()) {
      large_.resize(xs.size());
      out = large_.data();
    }
    size_t n = 0;
    for (double x : xs) {
      if (std::isfinite(x)) out[n++] = x;
    }
    view_ = std::span<double>(out, n);
  }
  FiniteCopy(const FiniteCopy&) = delete;
  FiniteCopy& operator=(const FiniteCopy&) = delete;
  std::span<double> view() const { return view_; }

 private:
  std::array<double, STACK_WINDOW> small_;
  std::vector<double> large_;
  std::span<double> view_;
};

struct SumCount {
  double sum = 0.0;
  size_t count = 0;
};

SumCount finite_sum(std::span<const double> xs) {
  SumCount s;
  for (double x : xs) {
    if (std::isfinite(x)) {
      s.sum += x;
      ++s.count;
    }
  }
  return s;
}

}  // namespace

double window_sum(std::span<const double> xs) {
  SumCount s = finite_sum(xs);
  return s.count == 0 ? NOT_A_NUMBER : s.sum;
}

double window_mean(std::span<const double> xs) {
  SumCount s = finite_sum(xs);
  return s.count == 0 ? NOT_A_NUMBER : s.sum / static_cast<double>(s.count);
}

double window_median(std::span<const double> xs) {
  FiniteCopy copy(xs);
  return stats::median_in_place(copy.view());
}

double window_min(std::span<const double> xs) {
  double best = NOT_A_NUMBER;
  for (double x : xs) {
    if (std::isfinite(x) && !(x >= best)) best = x;  // !(x >= NaN) holds: the first finite element wins
  }
  return best;
}

double window_max(std::span<const double> xs) {
  double best = NOT_A_NUMBER;
  for (double x : xs) {
    if (std::isfinite(x) && !(x <= best)) best = x;
  }
  return best;
}

double window_variance(std::span<const double> xs) {
  // Two passes: the one-pass formula loses all precision for values like 1e8 + tiny noise.
  double mean = window_mean(xs);
  if (std::isnan(mean)) return NOT_A_NUMBER;
  double squares = 0.0;
  size_t count = 0;
  for (double x : xs) {
    if (std::isfinite(x)) {
      squares += (x - mean) * (x - mean);
      ++count;
    }
  }
  return squares / static_cast<double>(count);
}

double window_stddev(std::span<const double> xs) { return std::sqrt(window_variance(xs)); }

double window_first(std::span<const double> xs) {
  for (double x : xs) {
    if (std::isfinite(x)) return x;
  }
  return NOT_A_NUMBER;
}

double window_last(std::span<const double> xs) {
  for (auto it = xs.rbegin(); it != xs.rend(); ++it) {
    if (std::isfinite(*it)) return *it;
  }
  return NOT_A_NUMBER;
}

double window_delta(std::span<const double> xs) { return window_last(xs) - window_first(xs); }

double window_pct_change(std::span<const double> xs) {
  double first = window_first(xs);
  if (first == 0.0) return NOT_A_NUMBER;  // no relative change from zero
  return (window_last(xs) - first) / std::fabs(first);
}

double window_slope(std::span<const double> xs, std::span<const int64_t> steps) {
  const size_t n = std::min(xs.size(), steps.size());
  double mean_t = 0.0;
  double mean_x = 0.0;
  size_t count = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(xs[i])) continue;
    mean_t += static_cast<double>(steps[i]);
    mean_x += xs[i];
    ++count;
  }
  if (count < 2) return NOT_A_NUMBER;
  mean_t /= static_cast<double>(count);
  mean_x /= static_cast<double>(count);
  double sxy = 0.0;
  double stt = 0.0;
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(xs[i])) continue;
    double dt = static_cast<double>(steps[i]) - mean_t;
    sxy += dt * (xs[i] - mean_x);
    stt += dt * dt;
  }
  return stt == 0.0 ? NOT_A_NUMBER : sxy / stt;
}

double window_ewma(std::span<const double> xs, double alpha) {
  if (!(alpha > 0.0 && alpha <= 1.0)) return NOT_A_NUMBER;
  double s = NOT_A_NUMBER;
  for (double x : xs) {
    if (!std::isfinite(x)) continue;
    s = std::isnan(s) ? x : alpha * x + (1.0 - alpha) * s;
  }
  return s;
}

double window_zscore(std::span<const double> xs) {
  if (xs.empty() || !std::isfinite(xs.back())) return NOT_A_NUMBER;
  double mean = window_mean(xs);
  double sd = window_stddev(xs);
  if (sd == 0.0) return 0.0;
  return (xs.back() - mean) / sd;
}

double window_robust_z(std::span<const double> xs) {
  if (xs.empty() || !std::isfinite(xs.back())) return NOT_A_NUMBER;
  FiniteCopy copy(xs);
  double median = 0, sigma = 0;
  stats::median_and_sigma(copy.view(), median, sigma);  // the latest element is finite: the copy is not empty
  double scale = std::max(sigma, ROBUST_Z_MIN_SCALE * std::max(1.0, std::fabs(median)));
  return (xs.back() - median) / scale;
}

}  // namespace rldk::rules
