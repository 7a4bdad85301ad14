// kl_series_from_log(): the KL to the reference model per step from a training log, for the gold check's fit of
// Gao et al.'s form against sqrt(KL).
#include <algorithm>
#include <cmath>
#include <map>

#include "rldk/metric_dictionary.h"
#include "rldk/reader.h"
#include "rldk/reward_health.h"

namespace rldk {

Result<KlSeries> kl_series_from_log(const std::string& path, const std::string& metric) {
  ReadOptions read;
  read.point_details = false;
  auto runs = read_runs(path, read);
  if (!runs.ok()) return runs.error();
  std::vector<std::string> wanted;
  if (!metric.empty()) {
    wanted = {MetricDictionary::builtin().canonical_name(metric), metric};
  } else {
    // Sequence KL is the quantity of Gao et al.; the per-token mean is what most trainers log.
    wanted = {"policy/kl_seq", "policy/kl", "policy/kl_loss"};
  }
  for (const Run& run : runs.value()) {
    for (const auto& name : wanted) {
      const Series* series = run.find(name);
      if (series == nullptr) continue;
      // One value per step: a step logged twice (a resumed run) keeps its last value.
      std::map<int64_t, double> by_step;
      for (size_t i = 0; i < series->size(); ++i) {
        double v = series->values[i];
        if (std::isfinite(v)) by_step[series->steps[i]] = std::max(0.0, v);  // estimators can dip below 0
      }
      if (by_step.empty()) continue;
      KlSeries kl;
      kl.metric = name;
      kl.source = path;
      for (const auto& [step, value] : by_step) {
        kl.steps.push_back(step);
        kl.values.push_back(value);
      }
      return kl;
    }
  }
  std::string names;
  for (const auto& n : wanted) names += (names.empty() ? "" : ", ") + n;
  return Error{ErrorCode::unrecognized, "the log has no finite values of " + names + " (--kl-metric names another)", path};
}

}  // namespace rldk
