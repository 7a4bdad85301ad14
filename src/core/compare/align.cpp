// Step alignment of two runs' series.
#include <algorithm>
#include <numeric>

#include "rldk/compare.h"

namespace rldk {

StepValues step_values(const Series& series) {
  StepValues out;
  // Points arrive in log order: a restarted trainer re-logs steps it already logged in an earlier segment. A stable
  // sort by step keeps arrival order within a step, so the last point of a step is the latest segment's.
  std::vector<size_t> order(series.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return series.steps[x] < series.steps[y]; });
  out.steps.reserve(order.size());
  out.values.reserve(order.size());
  for (size_t i : order) {
    if (!out.steps.empty() && out.steps.back() == series.steps[i]) {
      out.values.back() = series.values[i];
      ++out.overridden;
      continue;
    }
    out.steps.push_back(series.steps[i]);
    out.values.push_back(series.values[i]);
  }
  return out;
}

AlignedPair align(const StepValues& a, const StepValues& b) {
  AlignedPair out;
  size_t i = 0, j = 0;
  while (i < a.steps.size() && j < b.steps.size()) {
    if (a.steps[i] < b.steps[j]) {
      ++out.only_a;
      ++i;
    } else if (b.steps[j] < a.steps[i]) {
      ++out.only_b;
      ++j;
    } else {
      out.steps.push_back(a.steps[i]);
      out.a.push_back(a.values[i]);
      out.b.push_back(b.values[j]);
      ++i;
      ++j;
    }
  }
  out.only_a += a.steps.size() - i;
  out.only_b += b.steps.size() - j;
  return out;
}

Run merge_runs(std::vector<Run> runs) {
  if (runs.empty()) return Run{};
  Run merged = std::move(runs.front());
  for (size_t r = 1; r < runs.size(); ++r) {
    for (auto& [name, series] : runs[r].series) {
      auto [it, inserted] = merged.series.try_emplace(name, series);
      if (inserted) continue;
      Series& into = it->second;
      into.steps.insert(into.steps.end(), series.steps.begin(), series.steps.end());
      into.values.insert(into.values.end(), series.values.begin(), series.values.end());
      into.wall_times.insert(into.wall_times.end(), series.wall_times.begin(), series.wall_times.end());
      into.segments.insert(into.segments.end(), series.segments.begin(), series.segments.end());
    }
    for (auto& [k, v] : runs[r].meta) merged.meta.try_emplace(k, v);
    for (auto& [k, v] : runs[r].raw_to_canonical) merged.raw_to_canonical.try_emplace(k, v);
    merged.diagnostics.merge(runs[r].diagnostics);
  }
  return merged;
}

}  // namespace rldk
