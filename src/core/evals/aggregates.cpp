// rliable's aggregate metrics with its exact definitions (rliable/metrics.py, methods.md §1.1).
#include <algorithm>
#include <cmath>
#include <vector>

#include "rldk/evals.h"
#include "stats/robust.h"

namespace rldk::evals {
namespace {

std::vector<double> task_means(const TaskScores& scores) {
  std::vector<double> means;
  means.reserve(scores.size());
  for (const auto& task : scores) means.push_back(stats::mean(task));
  return means;
}

}  // namespace

double trimmed_mean(std::span<double> v, double proportion) {
  size_t n = v.size();
  if (n == 0) return NA;
  // scipy.stats.trim_mean: lowercut = int(proportiontocut * nobs), uppercut = nobs - lowercut.
  auto cut = static_cast<size_t>(proportion * static_cast<double>(n));
  if (2 * cut >= n) return NA;
  auto first = v.begin() + static_cast<std::ptrdiff_t>(cut);
  auto last = v.begin() + static_cast<std::ptrdiff_t>(n - cut);
  if (cut > 0) {
    std::nth_element(v.begin(), first, v.end());
    std::nth_element(first, last - 1, v.end());
  }
  double sum = 0;
  for (auto it = first; it != last; ++it) sum += *it;
  return sum / static_cast<double>(n - 2 * cut);
}

double aggregate_mean(const TaskScores& scores) { return stats::mean(task_means(scores)); }

double aggregate_median(const TaskScores& scores) {
  std::vector<double> means = task_means(scores);
  return stats::median_in_place(means);
}

double aggregate_iqm(const TaskScores& scores) {
  thread_local std::vector<double> pooled;
  pooled.clear();
  for (const auto& task : scores) pooled.insert(pooled.end(), task.begin(), task.end());
  return trimmed_mean(pooled, 0.25);
}

double optimality_gap(const TaskScores& scores, double gamma) {
  double sum = 0;
  size_t n = 0;
  for (const auto& task : scores) {
    for (double x : task) sum += std::min(x, gamma);
    n += task.size();
  }
  return n == 0 ? NA : gamma - sum / static_cast<double>(n);
}

double probability_of_improvement(const TaskScores& x, const TaskScores& y) {
  if (x.empty() || x.size() != y.size()) return NA;
  double total = 0;
  for (size_t m = 0; m < x.size(); ++m) {
    if (x[m].empty() || y[m].empty()) return NA;
    // Mann-Whitney's U of x over y divided by the pair count; identical columns give 1/2 either way.
    double u = 0;
    for (double a : x[m]) {
      for (double b : y[m]) u += a > b ? 1.0 : (a == b ? 0.5 : 0.0);
    }
    total += u / (static_cast<double>(x[m].size()) * static_cast<double>(y[m].size()));
  }
  return total / static_cast<double>(x.size());
}

const char* aggregate_name(Aggregate a) {
  switch (a) {
    case Aggregate::mean: return "mean";
    case Aggregate::median: return "median";
    case Aggregate::iqm: return "iqm";
    case Aggregate::optimality_gap: return "optimality_gap";
  }
  return "?";
}

double aggregate(Aggregate a, const TaskScores& scores, double gamma) {
  switch (a) {
    case Aggregate::mean: return aggregate_mean(scores);
    case Aggregate::median: return aggregate_median(scores);
    case Aggregate::iqm: return aggregate_iqm(scores);
    case Aggregate::optimality_gap: return optimality_gap(scores, gamma);
  }
  return NA;
}

}  // namespace rldk::evals
