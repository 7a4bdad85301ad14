// Stratified bootstrap (rliable's StratifiedBootstrap and StratifiedIndependentBootstrap) and the one-sample
// bootstrap of a mean, all driven by the seeded generator of evals/rng.h.
#include <algorithm>
#include <cmath>

#include "evals/intervals.h"
#include "evals/rng.h"
#include "rldk/evals.h"

namespace rldk::evals {
namespace {

// One replicate: runs drawn with replacement within each task (and the tasks themselves when asked).
void resample(const TaskScores& scores, bool task_bootstrap, Rng& rng, TaskScores& out) {
  out.resize(scores.size());
  for (size_t m = 0; m < scores.size(); ++m) {
    const auto& task = task_bootstrap ? scores[rng.below(scores.size())] : scores[m];
    out[m].resize(task.size());
    for (double& x : out[m]) x = task[rng.below(task.size())];
  }
}

// Leave run index i out of every task that has it (arch's leave-one-out over rliable's run axis).
std::vector<double> jackknife_runs(const TaskScores& scores, const std::function<double(const TaskScores&)>& f) {
  size_t runs = 0;
  for (const auto& task : scores) runs = std::max(runs, task.size());
  std::vector<double> out;
  TaskScores left(scores.size());
  for (size_t i = 0; i < runs; ++i) {
    for (size_t m = 0; m < scores.size(); ++m) {
      left[m].clear();
      for (size_t n = 0; n < scores[m].size(); ++n) {
        if (n != i || scores[m].size() == 1) left[m].push_back(scores[m][n]);
      }
    }
    out.push_back(f(left));
  }
  return out;
}

}  // namespace

Interval stratified_bootstrap(const TaskScores& scores, const std::function<double(const TaskScores&)>& statistic,
                              const BootstrapOptions& options) {
  double estimate = statistic(scores);
  for (const auto& task : scores) {
    if (task.empty()) return Interval{estimate, NA, NA, "a task has no runs"};
  }
  if (scores.empty()) return Interval{NA, NA, NA, "no tasks"};
  Rng rng(options.seed);
  std::vector<double> replicates;
  replicates.reserve(options.reps);
  TaskScores buffer;
  for (size_t r = 0; r < options.reps; ++r) {
    resample(scores, options.task_bootstrap, rng, buffer);
    replicates.push_back(statistic(buffer));
  }
  std::vector<double> jackknife;
  if (options.method == IntervalMethod::bca) jackknife = jackknife_runs(scores, statistic);
  return detail::interval_from_replicates(estimate, replicates, options.confidence, options.method, jackknife);
}

Interval stratified_bootstrap(const TaskScores& scores, Aggregate a, const BootstrapOptions& options, double gamma) {
  auto statistic = [a, gamma](const TaskScores& s) { return aggregate(a, s, gamma); };
  bool ragged = scores.empty() || std::any_of(scores.begin(), scores.end(), [](const auto& t) { return t.empty(); });
  if (a != Aggregate::iqm || options.task_bootstrap || ragged) return stratified_bootstrap(scores, statistic, options);
  // IQM fast path (methods.md §1.1 note c): each replicate is drawn straight into one pooled buffer and trimmed,
  // without building a resampled matrix. Same draws in the same order as the general path, so the same interval.
  Rng rng(options.seed);
  std::vector<double> replicates, pooled;
  replicates.reserve(options.reps);
  for (size_t r = 0; r < options.reps; ++r) {
    pooled.clear();
    for (const auto& task : scores) {
      for (size_t n = 0; n < task.size(); ++n) pooled.push_back(task[rng.below(task.size())]);
    }
    replicates.push_back(trimmed_mean(pooled, 0.25));
  }
  std::vector<double> jackknife;
  if (options.method == IntervalMethod::bca) jackknife = jackknife_runs(scores, statistic);
  return detail::interval_from_replicates(statistic(scores), replicates, options.confidence, options.method,
                                          jackknife);
}

Interval probability_of_improvement_interval(const TaskScores& x, const TaskScores& y,
                                             const BootstrapOptions& options) {
  double estimate = probability_of_improvement(x, y);
  if (std::isnan(estimate)) return Interval{NA, NA, NA, "the arms do not have runs on the same tasks"};
  Rng rng(options.seed);
  std::vector<double> replicates;
  replicates.reserve(options.reps);
  TaskScores bx, by;
  for (size_t r = 0; r < options.reps; ++r) {
    // Independent resampling of the two arms; the task draw (if any) is shared so both see the same task set.
    if (options.task_bootstrap) {
      bx.resize(x.size());
      by.resize(y.size());
      for (size_t m = 0; m < x.size(); ++m) {
        size_t t = rng.below(x.size());
        bx[m].resize(x[t].size());
        for (double& v : bx[m]) v = x[t][rng.below(x[t].size())];
        by[m].resize(y[t].size());
        for (double& v : by[m]) v = y[t][rng.below(y[t].size())];
      }
    } else {
      resample(x, false, rng, bx);
      resample(y, false, rng, by);
    }
    replicates.push_back(probability_of_improvement(bx, by));
  }
  Interval out = detail::interval_from_replicates(estimate, replicates, options.confidence,
                                                  IntervalMethod::percentile, {});
  if (options.method == IntervalMethod::bca) out.note = "BCa is not defined for two independent samples; percentile";
  return out;
}

Interval bootstrap_mean(std::span<const double> values, const BootstrapOptions& options) {
  size_t n = values.size();
  if (n == 0) return Interval{NA, NA, NA, "no values"};
  double sum = 0;
  for (double v : values) sum += v;
  double estimate = sum / static_cast<double>(n);
  Rng rng(options.seed);
  std::vector<double> replicates;
  replicates.reserve(options.reps);
  for (size_t r = 0; r < options.reps; ++r) {
    double s = 0;
    for (size_t i = 0; i < n; ++i) s += values[rng.below(n)];
    replicates.push_back(s / static_cast<double>(n));
  }
  std::vector<double> jackknife;
  if (options.method == IntervalMethod::bca && n >= 2) {
    for (double v : values) jackknife.push_back((sum - v) / static_cast<double>(n - 1));
  }
  return detail::interval_from_replicates(estimate, replicates, options.confidence, options.method, jackknife);
}

}  // namespace rldk::evals
