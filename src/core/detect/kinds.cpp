// The detector kinds' registry (names, parameters, options, factories) and what they share: robust scale
// estimates and the finding a detector reports. Each kind lives in its own file (level_shift.cpp, spike.cpp,
// window_kinds.cpp, rule_kinds.cpp, heldout_decline.cpp); each is O(1) per point after its warm-up plus bounded
// work once per episode (onset estimates), and none allocates per point. Thresholds come from the catalog
// (data/detectors/*.yaml); the rules in words are in docs/detectors.md.
#include "detect/kinds.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "detect/kind_support.h"
#include "detect/streaming.h"
#include "rldk/metric_dictionary.h"
#include "stats/change_point.h"
#include "stats/robust.h"

namespace rldk::detect {

namespace {

const std::map<std::string, std::vector<std::string>>& parameter_table() {
  static const std::map<std::string, std::vector<std::string>> table = {
      {"level_shift", {"warmup", "adapt_rate", "trend_rate", "min_relative_scale", "min_scale", "k", "h", "z_clip",
                       "freeze_fraction", "min_points", "min_change", "rearm_after", "early_min_change", "early_z",
                       "hindsight_points", "hindsight_z", "hindsight_min_change"}},
      {"spike", {"warmup", "adapt_rate", "trend_rate", "min_relative_scale", "min_scale", "threshold", "min_points",
                 "max_points", "min_change", "early_min_change"}},
      {"drift", {"reference_skip", "reference_points", "window", "min_relative_change", "min_sigma", "min_points"}},
      {"threshold", {"min_points", "max_gap"}},
      {"controller", {"warmup", "adapt_rate", "trend_rate", "min_relative_scale", "min_scale", "k", "h", "z_clip",
                      "freeze_fraction", "min_points", "min_change", "rearm_after", "early_min_change", "early_z",
                      "hindsight_points", "hindsight_z", "hindsight_min_change", "coef_min_relative_change"}},
      {"co_trend", {"reference_points", "window", "proxy_min_sigma", "other_min_relative_change", "other_min_sigma",
                    "min_points"}},
      {"flat", {"reference_points", "window", "flat_ratio", "min_move_sigma", "min_scale", "min_points",
                "hindsight_points"}},
      {"heldout_decline", {"proxy_reference_points", "min_evals", "heldout_min_drop_sigma",
                           "proxy_min_rise_sigma", "min_points"}},
      {"zero_variance_groups", {"group_size", "margin", "min_fraction", "fallback_threshold", "min_points"}},
      {"schedule_jump", {"jump_fraction", "smooth_window", "smooth_fraction"}},
      {"bound", {"min_points", "max_gap", "open_max_gap", "chance_rate", "start_points", "history", "onset_fraction",
                 "progress_min_sigma", "resolved_min_ratio", "critical_min_points"}},
      {"steady_trend", {"min_points", "min_z", "min_relative_change", "min_scale", "edge_fraction", "capacity",
                        "min_late_share", "min_end"}},
      {"stall", {"stretch_points", "max_z", "start_fraction", "lr_fraction", "capacity"}},
      {"drawdown", {"smooth", "hold", "giveback", "min_relative", "min_sigma", "min_points", "max_gap", "history"}},
      {"rebound", {"smooth", "min_ratio", "min_rise", "min_sigma", "min_points", "max_gap", "history"}},
      {"constant", {"min_points", "max_spread", "relative_spread", "alarm_points"}},
      {"at_level", {"level", "band", "blocks", "min_points", "capacity"}},
      {"floor", {"min_points", "min_share", "min_before", "min_drop", "max_spread", "relative_spread"}},
      {"ceiling", {"min_points", "min_share"}},
      {"non_finite", {}},
      {"never_positive", {"min_points"}},
  };
  return table;
}

// The parameters that count logged points, with the fewest points each may shrink to on a sparsely logged run. A
// level, a noise scale or a window needs about twenty points: with ten, a median/MAD scale or a slope from a short
// warm-up is off often enough to read ordinary noise as a shift (measured on the benchmark's short clean runs); a
// sustained condition needs five.
const std::map<std::string, double>& point_count_floors() {
  static const std::map<std::string, double> floors = {
      {"warmup", 20},         {"reference_points", 20}, {"proxy_reference_points", 20}, {"window", 20},
      {"reference_skip", 0},  {"rearm_after", 10},      {"min_points", 5},              {"smooth_window", 5},
      {"alarm_points", 5},
  };
  return floors;
}

const std::vector<std::string> DIRECTIONS = {"up", "down", "both"};
const std::vector<std::string> TRANSFORMS = {"none", "log"};

}  // namespace

void ease(Finding& f, Severity to, const std::string& because) {
  f.severity = to;
  f.explanation += because;
  f.eased_because += because;
}

// A change judged against the run's own history (a KL "drift" from 1e-13 to 1e-5, a level shift from 0.01 to
// 0.05 nats) is worth knowing but is no warning while the metric stays inside its healthy range: the domain
// knowledge in data/metrics.yaml gates the severity of relative detectors. Bound detectors judge the range
// themselves and are left alone. A spike is judged by the level it came back to: a KL of 1.1 nats at one step of a
// run that stays at 0.08 is one batch (with one prompt per step, one odd completion), not the policy moving away
// from its reference, which would keep the KL up.
void apply_healthy_range(const DetectorSpec& spec, Finding& f) {
  if (spec.kind == "bound" || f.severity == Severity::info) return;
  const MetricInfo* info = MetricDictionary::builtin().find(f.metric);
  if (info == nullptr) return;
  std::string direction = spec.option("direction", "both");
  // A shift is judged by the level it moved to (the smoothed level it reached, else its mean level), not by its
  // most extreme point: one batch's KL of 2.6 inside a shift from 0.04 to 0.12 nats is a spike (kl_spike judges
  // it), and the level stayed healthy; a ramp whose mean is 0.2 but that reached 0.5 did not. A finding without a
  // level is judged by its peak.
  double reached = f.peak_value;
  for (const char* key : {"level", "reached"}) {
    auto it = f.evidence.find(key);
    if (it != f.evidence.end() && std::isfinite(it->second)) reached = it->second;
  }
  auto baseline = f.evidence.find("baseline");
  bool spike = spec.kind == "spike" && baseline != f.evidence.end() && std::isfinite(baseline->second);
  // A spike still under way when the data ended has not come back to anything yet: it is judged by its peak, as a
  // finding without a level (a KL that rose from 0.001 to 0.016 nats at the run's last points stayed healthy).
  if (spike && f.evidence.count("open_at_end")) spike = false;
  if (spike) reached = baseline->second;
  // The detector's own warning level, where the catalog gives one, replaces the metric's range on the side it watches.
  HealthyRange range = info->healthy;
  if (!std::isnan(spec.level_warning)) {
    HealthyRange::Side& side = direction == "down" ? range.below : range.above;
    side.warning = spec.level_warning;
  }
  bool inside = false;
  double limit = std::numeric_limits<double>::quiet_NaN();
  if (direction == "up" && range.above.set() && reached <= range.above.warning) inside = true, limit = range.above.warning;
  if (direction == "down" && range.below.set() && reached >= range.below.warning) inside = true, limit = range.below.warning;
  if (!inside) return;
  f.evidence["healthy_limit"] = limit;
  char note[240];
  if (spike) {
    std::snprintf(note, sizeof note,
                  " It came back inside the healthy range of %s (%s %.3g): one batch, not a lasting change, so this is "
                  "a note, not a warning.",
                  f.metric.c_str(), direction == "up" ? "below" : "above", limit);
  } else {
    std::snprintf(note, sizeof note, " It stayed inside the healthy range of %s (%s %.3g), so this is a note, not a warning.",
                  f.metric.c_str(), direction == "up" ? "below" : "above", limit);
  }
  ease(f, Severity::info, note);
}

void Detector::report(int64_t onset, int64_t end, int64_t peak_step, double peak_value,
                      std::map<std::string, double> evidence, const std::map<std::string, std::string>& extra_words) {
  Finding f;
  f.detector = spec_.id;
  f.fault = spec_.fault;
  f.area = spec_.area;
  f.severity = spec_.severity;
  f.metric = metric_names.empty() ? std::string() : metric_names.front();
  f.onset_step = onset;
  f.end_step = end;
  f.peak_step = peak_step;
  f.peak_value = peak_value;
  std::map<std::string, double> values = evidence;
  values["onset_step"] = static_cast<double>(onset);
  values["end_step"] = static_cast<double>(end);
  values["peak_step"] = static_cast<double>(peak_step);
  values["peak_value"] = peak_value;
  std::map<std::string, std::string> words = extra_words;
  words["metric"] = f.metric;
  for (size_t i = 0; i < metric_names.size() && i < spec_.inputs.size(); ++i) words[spec_.inputs[i].first] = metric_names[i];
  f.explanation = fill_template(spec_.explanation, values, words);
  f.fixes = spec_.fixes;
  f.evidence = std::move(evidence);
  findings_.push_back(std::move(f));
}

DetectorSpec for_logging_interval(const DetectorSpec& spec, double interval) {
  DetectorSpec scaled = spec;
  if (!(interval > 1)) return scaled;
  for (const auto& [name, floor] : point_count_floors()) {
    auto it = scaled.params.find(name);
    if (it == scaled.params.end()) continue;
    double steps = it->second;
    it->second = std::max(std::min(steps, floor), std::ceil(steps / interval));
  }
  return scaled;
}

// The median gap between logged steps, when the run logs at a regular interval (at least half of its gaps are that
// median). A history sampled at irregular steps (W&B's run.history() keeps 500 of a run's steps at random gaps) has
// no interval to scale point counts by: its first few gaps say 1, its whole run 2, and a scan that plans early would
// judge it differently from one that planned on all of it. Such a run keeps the catalog's counts (1).
double logging_interval(const std::vector<int64_t>& steps) {
  std::vector<double> gaps;
  for (size_t i = 1; i < steps.size(); ++i) {
    if (steps[i] > steps[i - 1]) gaps.push_back(static_cast<double>(steps[i] - steps[i - 1]));
  }
  if (gaps.empty()) return 1;
  size_t count = gaps.size();
  double median = stats::median_in_place(gaps);
  size_t at_median = static_cast<size_t>(std::count(gaps.begin(), gaps.end(), median));
  return 2 * at_median >= count ? std::max(1.0, median) : 1.0;
}

double logging_interval(const Run& run) {
  const Series* densest = nullptr;
  for (const auto& [name, s] : run.series) {
    if (densest == nullptr || s.size() > densest->size()) densest = &s;
  }
  return densest == nullptr ? 1 : logging_interval(densest->steps);
}

bool SmoothedLevel::push(double v, int64_t step) {
  recent_.push(v, step);
  history_.push(v, step);
  if (!recent_.full()) return false;
  scratch_.clear();
  for (int i = 0; i < recent_.size(); ++i) scratch_.push_back(recent_.at_from_oldest(i));
  level_ = stats::median_in_place(scratch_);
  return true;
}

double SmoothedLevel::noise() {
  scratch_.clear();
  for (int i = 0; i < history_.size(); ++i) scratch_.push_back(history_.at_from_oldest(i));
  return stats::difference_noise(scratch_);
}

int64_t SmoothedLevel::onset_after(int64_t extreme_step, double toward) {
  int first = 0;
  for (int i = 0; i < history_.size(); ++i) {
    if (history_.step_from_oldest(i) <= extreme_step) first = i;
  }
  first = std::max(0, first - smooth_ + 1);
  scratch_.clear();
  for (int i = first; i < history_.size(); ++i) scratch_.push_back(toward * history_.at_from_oldest(i));
  size_t start = stats::ramp_start(scratch_);
  return history_.step_from_oldest(first + static_cast<int>(start));
}

double SmoothedLevel::level_at(int64_t step) {
  int last = -1;
  for (int i = 0; i < history_.size(); ++i) {
    if (history_.step_from_oldest(i) == step) last = i;
  }
  if (last < 0) return NaN;
  scratch_.clear();
  for (int i = std::max(0, last - smooth_ + 1); i <= last; ++i) scratch_.push_back(history_.at_from_oldest(i));
  return stats::median_in_place(scratch_);
}

const std::vector<std::string>* kind_parameters(const std::string& kind) {
  auto it = parameter_table().find(kind);
  return it == parameter_table().end() ? nullptr : &it->second;
}

const std::vector<KindOption>& kind_options(const std::string& kind) {
  static const std::map<std::string, std::vector<KindOption>> table = {
      {"level_shift",
       {{"direction", DIRECTIONS},
        {"transform", TRANSFORMS},
        {"onset", {"shift", "ramp"}},
        {"warmup_level", {"median", "line_end"}},
        {"beyond_start", {"no", "yes"}}}},
      {"spike", {{"direction", DIRECTIONS}, {"transform", TRANSFORMS}}},
      {"controller", {{"direction", DIRECTIONS}, {"transform", TRANSFORMS}}},
      {"drift", {{"direction", DIRECTIONS}}},
      {"flat", {{"direction", DIRECTIONS}}},
      {"co_trend", {{"other_direction", {"up", "down"}}}},
      {"bound", {{"bound", {"above", "below", "above_start", "below_start"}}, {"transform", TRANSFORMS},
                 {"onset", {"change", "crossing", "start"}}, {"progress", {"eases", "required"}}}},
      {"stall", {}},
      {"steady_trend", {{"direction", DIRECTIONS}, {"compare", {"ratio", "magnitude"}},
                        {"live", {"end", "so_far"}}}},
  };
  static const std::vector<KindOption> none;
  auto it = table.find(kind);
  return it == table.end() ? none : it->second;
}

const std::vector<std::string>& detector_kinds() {
  static const std::vector<std::string> kinds = [] {
    std::vector<std::string> k;
    for (const auto& [name, params] : parameter_table()) k.push_back(name);
    return k;
  }();
  return kinds;
}

std::unique_ptr<Detector> make_detector(const DetectorSpec& spec) {
  using Factory = std::unique_ptr<Detector> (*)(const DetectorSpec&);
  static const std::map<std::string, Factory> factories = {
      {"level_shift", make_level_shift}, {"controller", make_controller},
      {"spike", make_spike},             {"drift", make_drift},
      {"co_trend", make_co_trend},       {"flat", make_flat},
      {"threshold", make_threshold},     {"zero_variance_groups", make_zero_variance_groups},
      {"schedule_jump", make_schedule_jump}, {"heldout_decline", make_heldout_decline},
      {"bound", make_bound},             {"steady_trend", make_steady_trend},
      {"stall", make_stall},
      {"drawdown", make_drawdown},       {"rebound", make_rebound},
      {"constant", make_constant},       {"floor", make_floor},       {"ceiling", make_ceiling},
      {"at_level", make_at_level},
  };
  auto it = factories.find(spec.kind);
  return it == factories.end() ? nullptr : it->second(spec);  // judged_over_metrics kinds: the scan driver's own
}

bool judged_over_metrics(const std::string& kind) { return kind == "non_finite" || kind == "never_positive"; }

}  // namespace rldk::detect
