// The scan driver: resolves each catalog detector's inputs against a run, streams the run's columnar series
// through it (the first input drives, the others carry their latest value forward), collects the episodes and
// scores health per area.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "detect/kinds.h"
#include "io/read_each_file.h"
#include "detect/streaming.h"
#include "rldk/metric_dictionary.h"
#include "rldk/scan.h"
#include "stats/robust.h"

namespace rldk {
namespace {

// |loss| below this in most logged steps is "near 0" for a GRPO run (typical KL-term sizes are 1e-4..1e-2).
constexpr double GRPO_NEAR_ZERO_LOSS = 0.05;

bool selected(const DetectorSpec& d, const std::vector<std::string>& names) {
  return std::any_of(names.begin(), names.end(),
                     [&](const std::string& n) { return n == d.id || n == d.fault || n == d.area; });
}

// Streams the inputs through the detector. A step below the previous one is a restart: the detector resets.
void drive(detect::Detector& detector, const std::vector<const Series*>& inputs) {
  const Series& lead = *inputs.front();
  size_t n_inputs = inputs.size();
  std::vector<double> x(n_inputs, detect::NaN);
  std::vector<size_t> cursor(n_inputs, 0);
  int64_t previous = 0;
  for (size_t i = 0; i < lead.size(); ++i) {
    int64_t step = lead.steps[i];
    if (i > 0 && step < previous) {
      detector.reset();
      // Other inputs restart with the lead: find their first point at or after the restart.
      for (size_t r = 1; r < n_inputs; ++r) {
        const Series& s = *inputs[r];
        size_t j = cursor[r];
        while (j > 0 && s.steps[j - 1] >= step) --j;
        cursor[r] = j;
        x[r] = detect::NaN;
      }
    }
    previous = step;
    for (size_t r = 1; r < n_inputs; ++r) {
      const Series& s = *inputs[r];
      size_t& j = cursor[r];
      while (j < s.size() && s.steps[j] <= step) x[r] = s.values[j++];
    }
    x[0] = lead.values[i];
    detector.observe(step, x.data());
  }
  detector.finish();
}

// The first non-finite value in the run: the metric that went first, the stretch of non-finite values that
// follows in it, and how many metrics went non-finite in all.
void scan_non_finite(const DetectorSpec& spec, const Run& run, std::vector<Finding>& out) {
  const Series* first = nullptr;
  size_t first_index = 0;
  size_t metrics_affected = 0, points = 0;
  for (const auto& [name, s] : run.series) {
    size_t i = s.first_non_finite();
    if (i == s.size()) continue;
    ++metrics_affected;
    points += s.non_finite_count();
    if (first == nullptr || s.steps[i] < first->steps[first_index]) {
      first = &s;
      first_index = i;
    }
  }
  if (first == nullptr) return;
  size_t end = first_index;
  while (end + 1 < first->size() && !std::isfinite(first->values[end + 1])) ++end;
  Finding f;
  f.detector = spec.id;
  f.fault = spec.fault;
  f.area = spec.area;
  f.severity = spec.severity;
  f.metric = first->name;
  f.onset_step = first->steps[first_index];
  f.end_step = first->steps[end];
  f.peak_step = f.onset_step;
  f.peak_value = first->values[first_index];
  f.evidence = {{"metrics_affected", static_cast<double>(metrics_affected)},
                {"non_finite_points", static_cast<double>(points)},
                {"consecutive_points", static_cast<double>(end - first_index + 1)},
                {"last_finite_value", first_index > 0 ? first->values[first_index - 1] : NAN}};
  std::map<std::string, double> values = f.evidence;
  values["onset_step"] = static_cast<double>(f.onset_step);
  values["end_step"] = static_cast<double>(f.end_step);
  f.explanation = fill_template(spec.explanation, values, {{"metric", f.metric}});
  f.fixes = spec.fixes;
  out.push_back(std::move(f));
}

uint64_t distinct_steps(const Run& run) {
  // The union of every series' steps. Most runs log their metrics at a few sets of steps (every step, every eval),
  // so a series whose steps equal those of one already taken adds nothing and is skipped (a wide log of 70 metrics
  // sorts one column, not 70). Two logged names that mean one metric give two points per step: duplicates go with
  // the sort.
  std::vector<int64_t> steps;
  std::vector<const std::vector<int64_t>*> taken;
  for (const auto& entry : run.series) {
    const std::vector<int64_t>& own = entry.second.steps;
    if (std::any_of(taken.begin(), taken.end(), [&](const auto* t) { return *t == own; })) continue;
    steps.insert(steps.end(), own.begin(), own.end());
    taken.push_back(&own);
  }
  std::sort(steps.begin(), steps.end());
  return static_cast<uint64_t>(std::unique(steps.begin(), steps.end()) - steps.begin());
}

// A change judged against the run's own history (a KL "drift" from 1e-13 to 1e-5, a level shift from 0.01 to
// 0.05 nats) is worth knowing but is no warning while the metric stays inside its healthy range: the domain
// knowledge in data/metrics.yaml gates the severity of relative detectors. Bound detectors judge the range
// themselves and are left alone.
void apply_healthy_range(const DetectorSpec& spec, Finding& f) {
  if (spec.kind == "bound" || f.severity == Severity::info) return;
  const MetricInfo* info = MetricDictionary::builtin().find(f.metric);
  if (info == nullptr) return;
  std::string direction = spec.option("direction", "both");
  auto level = f.evidence.find("level");
  double reached = level != f.evidence.end() && std::isfinite(level->second) ? level->second : f.peak_value;
  reached = direction == "up" ? std::max(reached, f.peak_value) : direction == "down" ? std::min(reached, f.peak_value)
                                                                                        : reached;
  const HealthyRange& range = info->healthy;
  bool inside = false;
  double limit = NAN;
  if (direction == "up" && range.above.set() && reached <= range.above.warning) inside = true, limit = range.above.warning;
  if (direction == "down" && range.below.set() && reached >= range.below.warning) inside = true, limit = range.below.warning;
  if (!inside) return;
  f.severity = Severity::info;
  f.evidence["healthy_limit"] = limit;
  char note[160];
  std::snprintf(note, sizeof note, " It stayed inside the healthy range of %s (%s %.3g), so this is a note, not a warning.",
                f.metric.c_str(), direction == "up" ? "below" : "above", limit);
  f.explanation += note;
}

// The step at which a detector had seen enough to raise the finding (what a live monitor would have reported).
// Kinds that judge an episode only when it ends (steady trends) raise it at its end.
double alarm_step(const Finding& f) {
  for (const char* key : {"alarm_step", "first_alarm_step"}) {
    auto it = f.evidence.find(key);
    if (it != f.evidence.end() && std::isfinite(it->second)) return it->second;
  }
  return static_cast<double>(f.end_step);
}

// Several detectors may see one failure from different sides (a bound crossed at the first steps, a level shift
// against a learned baseline, a steady trend over the run). A person needs one finding per failure: findings of
// the same fault whose step ranges overlap are one episode, reported by the detector that raised it first (its
// onset comes from the data it had, dated locally), at the highest severity any of them gave, with the others
// named in its evidence.
void merge_same_fault(std::vector<Finding>& findings) {
  std::vector<Finding> kept;
  for (auto& f : findings) {
    auto same = std::find_if(kept.begin(), kept.end(), [&](const Finding& k) {
      return k.fault == f.fault && f.onset_step <= k.end_step && k.onset_step <= f.end_step;
    });
    if (same == kept.end()) {
      kept.push_back(std::move(f));
      continue;
    }
    Finding* first = &*same;
    Finding* other = &f;
    if (alarm_step(f) < alarm_step(*same)) std::swap(*same, f);  // the earlier alarm keeps the finding
    first->severity = std::max(first->severity, other->severity);
    first->evidence["also_" + other->detector + "_onset"] = static_cast<double>(other->onset_step);
  }
  // Swaps may have moved a later onset into an earlier slot: keep the findings ordered by onset.
  std::stable_sort(kept.begin(), kept.end(), [](const Finding& a, const Finding& b) {
    if (a.onset_step != b.onset_step) return a.onset_step < b.onset_step;
    return a.detector < b.detector;
  });
  findings = std::move(kept);
}

// A GRPO run's loss sits near 0 by construction: advantages are normalised within each group (mean 0), and with
// one update per batch the importance ratio is 1, so the policy-gradient term averages to about 0 whatever the
// run learns (only the KL term, beta x KL, remains). People read "loss ~ 0" as "nothing is learned"; it is not.
void explain_grpo_loss(const Run& run, RunScan& scan) {
  // GRPO-like: group statistics logged, or a reward spread with a policy but no critic (PPO logs value metrics).
  bool groups = run.find("reward/frac_zero_std") != nullptr || run.find("reward/group_std") != nullptr;
  bool criticless = run.find("reward/std") != nullptr && run.find("value/loss") == nullptr &&
                    (run.find("policy/kl") != nullptr || run.find("policy/entropy") != nullptr);
  if (!groups && !criticless) return;
  const Series* loss = run.find("train/loss");
  if (loss == nullptr) loss = run.find("policy/loss");
  if (loss == nullptr || loss->size() < 3) return;
  std::vector<double> magnitude;
  for (double v : loss->values) {
    if (std::isfinite(v)) magnitude.push_back(std::fabs(v));
  }
  if (magnitude.size() < 3) return;
  double median = stats::median_in_place(magnitude);
  if (median > GRPO_NEAR_ZERO_LOSS) return;
  char text[400];
  std::snprintf(text, sizeof text,
                "%s stays near 0 (median absolute value %.3g). That is expected in GRPO: advantages are normalised within "
                "each group and, with one update per batch, the policy-gradient term averages to about 0 whatever "
                "the run learns. Judge learning by reward, KL and entropy, not by this loss.",
                loss->name.c_str(), median);
  scan.notes.emplace_back(text);
}

}  // namespace

std::vector<std::string> unknown_detector_names(const std::vector<std::string>& names,
                                                const DetectorCatalog& catalog) {
  std::vector<std::string> unknown;
  for (const auto& n : names) {
    bool known = std::any_of(catalog.detectors.begin(), catalog.detectors.end(),
                             [&](const DetectorSpec& d) { return n == d.id || n == d.fault || n == d.area; });
    if (!known) unknown.push_back(n);
  }
  return unknown;
}

std::vector<Finding> run_detector_on_values(const DetectorSpec& spec,
                                            const std::map<std::string, std::vector<double>>& values) {
  Run run;
  run.run_id = "test";
  for (const auto& [name, vs] : values) {
    Series s;
    s.name = name;
    for (size_t i = 0; i < vs.size(); ++i) {
      s.steps.push_back(static_cast<int64_t>(i) + 1);
      s.values.push_back(vs[i]);
      s.wall_times.push_back(NAN);
      s.segments.push_back(0);
    }
    run.series[name] = std::move(s);
  }
  DetectorCatalog one;
  one.detectors.push_back(spec);
  ScanOptions options;
  options.catalog = &one;
  return scan_run(run, options).findings;
}

Result<std::vector<SourceScan>> scan_source(const std::string& path, const ScanOptions& options, unsigned threads,
                                            const std::function<void(size_t, size_t)>& progress) {
  return io::map_each_file<Run, RunBuilder>(
      path, scan_read_options(), threads,
      [&](Run&& run) { return SourceScan{scan_run(run, options), std::move(run.diagnostics)}; }, progress);
}

RunScan scan_run(const Run& run, const ScanOptions& options) {
  const DetectorCatalog& catalog = options.catalog ? *options.catalog : builtin_detector_catalog();
  RunScan scan;
  scan.run_id = run.run_id;
  scan.source = run.source.path;
  scan.first_step = run.first_step();
  scan.last_step = run.last_step();
  scan.step_count = distinct_steps(run);
  std::set<std::string> areas_checked;
  double interval = detect::logging_interval(run);
  for (const auto& catalog_spec : catalog.detectors) {
    // Point counts in the catalog are optimizer steps; the detector judges the points this run logged.
    const DetectorSpec spec = detect::for_logging_interval(catalog_spec, interval);
    if (!options.only.empty() && !selected(spec, options.only)) continue;
    if (selected(spec, options.skip)) continue;
    if (spec.kind == "non_finite") {
      if (run.series.empty()) {
        scan.skipped.push_back({spec.id, "the run has no metrics"});
        continue;
      }
      areas_checked.insert(spec.area);
      scan_non_finite(spec, run, scan.findings);
      continue;
    }
    std::vector<const Series*> inputs;
    std::vector<std::string> names;
    std::string missing;
    for (const auto& [role, candidates] : spec.inputs) {
      const Series* found = nullptr;
      for (const auto& c : candidates) {
        if ((found = run.find(c)) != nullptr && found->size() > 0) break;
        found = nullptr;
      }
      if (found == nullptr) {
        missing = candidates.size() == 1 ? candidates.front() : candidates.front() + " (or an alternative)";
        break;
      }
      inputs.push_back(found);
      names.push_back(found->name);
    }
    if (!missing.empty()) {
      scan.skipped.push_back({spec.id, "missing metric " + missing});
      continue;
    }
    auto detector = detect::make_detector(spec);
    if (!detector) continue;
    detector->metric_names = names;
    drive(*detector, inputs);
    areas_checked.insert(spec.area);
    for (auto& f : detector->findings()) {
      apply_healthy_range(spec, f);
      scan.findings.push_back(std::move(f));
    }
  }
  std::stable_sort(scan.findings.begin(), scan.findings.end(), [](const Finding& a, const Finding& b) {
    if (a.onset_step != b.onset_step) return a.onset_step < b.onset_step;
    return a.detector < b.detector;
  });
  merge_same_fault(scan.findings);
  explain_grpo_loss(run, scan);
  scan.health = health_scores(scan.findings, {areas_checked.begin(), areas_checked.end()}, scan.first_step,
                              scan.last_step);
  return scan;
}

double severity_weight(Severity severity) {
  switch (severity) {
    case Severity::info: return 0.05;
    case Severity::warning: return 0.25;
    case Severity::critical: return 0.6;
  }
  return 0.25;
}

HealthScores health_scores(const std::vector<Finding>& findings, const std::vector<std::string>& areas_checked,
                           int64_t first_step, int64_t last_step) {
  HealthScores h;
  for (const auto& a : areas_checked) h.areas[a] = 1.0;
  double span = static_cast<double>(std::max<int64_t>(last_step - first_step + 1, 1));
  for (const auto& f : findings) {
    double coverage = std::clamp(static_cast<double>(f.end_step - f.onset_step + 1) / span, 0.0, 1.0);
    double cost = severity_weight(f.severity) * (0.5 + 0.5 * coverage);
    auto it = h.areas.find(f.area);
    if (it == h.areas.end()) it = h.areas.emplace(f.area, 1.0).first;
    it->second *= 1.0 - cost;
    h.overall *= 1.0 - cost;
  }
  return h;
}

size_t findings_at_or_above(const std::vector<RunScan>& scans, Severity level) {
  size_t n = 0;
  for (const auto& s : scans) {
    for (const auto& f : s.findings) n += static_cast<int>(f.severity) >= static_cast<int>(level) ? 1 : 0;
  }
  return n;
}

}  // namespace rldk
