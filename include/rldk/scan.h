// Forensics scan: what went wrong in a run, when it started, which metric moved first, and what to change.
//
// Detectors are data (data/detectors/*.yaml, docs/detectors.md): each names a fault type, the metrics it reads, a
// detector kind implemented in C++ (src/core/detect/) and that kind's parameters. Every kind is a streaming state
// machine with O(1) or O(window) work per point, so the same detectors can run live; the offline scan is the
// streaming run to the end of the data. Findings are episodes (onset, end, peak), never one per step.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "rldk/chart.h"
#include "rldk/json.h"
#include "rldk/reader.h"
#include "rldk/result.h"
#include "rldk/run.h"

namespace rldk {

inline constexpr const char* SCAN_SCHEMA = "rldk.scan/v1";

enum class Severity { info = 0, warning = 1, critical = 2 };
const char* severity_name(Severity severity);
// "info", "warning" or "critical"; false for anything else.
bool parse_severity(const std::string& name, Severity& severity);

// One condition of a `threshold` detector, evaluated on the same step for every input it names.
struct ThresholdCondition {
  std::string input;      // role name
  std::string divide_by;  // role whose value divides the input's (a ratio); empty: none
  std::string multiply_by;  // role whose value multiplies the input's (before the division); empty: none
  bool absolute = false;  // compare |value|
  double above = 0.0;     // the condition holds when value > above (if has_above) ...
  double below = 0.0;     // ... or value < below (if has_below); with both: outside [below, above]
  bool has_above = false;
  bool has_below = false;
};

struct DetectorSpec {
  std::string id;
  std::string fault;     // the fault type it detects (the scan contract's vocabulary)
  std::string area;      // kl | entropy | reward | gradients | advantages | ratio | loss | optimizer | throughput | data | numerics
  std::string kind;      // level_shift | spike | drift | threshold | controller | co_trend | flat | trend |
                         // zero_variance_groups | schedule_jump | non_finite
  Severity severity = Severity::warning;
  std::string title;     // one line
  // Inputs by role; each role lists candidate canonical metric names, the first one the run has is used. The first
  // role drives the detector (its steps are the detector's steps); other roles carry their latest value forward.
  std::vector<std::pair<std::string, std::vector<std::string>>> inputs;
  // The first required_inputs roles must be logged for the detector to run; the roles after them (the catalog's
  // `context:`) are read when the run logs them and read NaN when it does not.
  size_t required_inputs = 0;
  std::map<std::string, double> params;        // numeric parameters (documented defaults in the catalog)
  std::map<std::string, std::string> options;  // word parameters: direction, transform
  std::vector<ThresholdCondition> conditions;  // threshold kind only
  // Bound kind: conditions that, holding together at a point, show the watched metric does not mean what it says
  // there (the catalog's `contradicted_when:`); the detector then judges nothing and reports nothing for the run.
  std::vector<ThresholdCondition> contradictions;
  std::string explanation;  // template: {name} or {name:.3g} for evidence values and finding fields
  std::vector<std::string> fixes;
  // A training setting that pushes for this change on purpose (an entropy bonus for an entropy rise): when the run
  // sets it above 0, a finding is one severity lower and its explanation gains the note (a template with
  // {setting_value}).
  std::string eased_by_setting, eased_by_note;
  // Levels that replace the metric's healthy side (the catalog's `levels:`). A bound detector watches them: a milder
  // fault on the same side (a reward spread at a quarter of its start is saturation; at 5 % there is no signal at
  // all). Any other kind's finding is a warning only beyond the warning level (apply_healthy_range): a change whose
  // own level says more than the metric's range (a clipped fraction climbing to 30 %). NaN: the metric's own levels.
  double level_warning = NAN, level_critical = NAN;
  // Values per metric (steps 1, 2, ...) that must make the detector report a finding, and values that must not.
  std::map<std::string, std::vector<double>> test_fires, test_quiet;
  std::string origin;  // file:line

  double param(const std::string& name, double fallback) const;
  std::string option(const std::string& name, const std::string& fallback) const;
};

struct DetectorCatalog {
  std::vector<DetectorSpec> detectors;
  const DetectorSpec* find(const std::string& id) const;
};

// Parses catalog YAML; errors carry file:line:column.
Result<DetectorCatalog> parse_detector_catalog(const std::string& yaml_text, const std::string& origin);
// The built-in catalog (every data/detectors/*.yaml), parsed once.
const DetectorCatalog& builtin_detector_catalog();
// The fault types of the scan contract, in contract order.
const std::vector<std::string>& fault_types();

struct Finding {
  std::string detector;
  std::string fault;
  std::string area;
  Severity severity = Severity::warning;
  std::string metric;
  int64_t onset_step = 0;
  int64_t end_step = 0;
  int64_t peak_step = 0;
  double peak_value = 0.0;
  std::map<std::string, double> evidence;
  std::string explanation;
  std::vector<std::string> fixes;
  // Why it was made less severe, when the run's own course or settings explain it (the reward rose, a setting pushes
  // for it, it recovered or stayed in its healthy range): the sentence the explanation ends with. Empty if not.
  std::string eased_because;
};

struct SkippedDetector {
  std::string detector;
  std::string reason;
};

struct HealthScores {
  double overall = 1.0;
  std::map<std::string, double> areas;  // areas with at least one detector that ran
};

struct RunScan {
  std::string run_id;
  std::string source;
  int64_t first_step = 0;
  int64_t last_step = 0;
  uint64_t step_count = 0;  // distinct steps over all metrics
  std::vector<Finding> findings;  // ordered by onset_step, then detector id
  HealthScores health;
  std::vector<SkippedDetector> skipped;
  // Things about the run that look alarming but are expected, explained (a GRPO loss near 0), so a reader does
  // not take them for a failure the scan missed.
  std::vector<std::string> notes;
};

struct ScanOptions {
  std::vector<std::string> only;  // detector ids (or fault types, or areas) to run; empty: all
  std::vector<std::string> skip;  // detector ids (or fault types, or areas) not to run
  const DetectorCatalog* catalog = nullptr;  // nullptr: the built-in catalog
  // Distinct steps read before the scan plans its detectors (the metrics each one watches, the logging interval
  // that scales its point counts) and starts feeding them step by step, keeping no more of the run. A run of at
  // most this many steps is planned on all of its data; a longer one on its first plan_steps steps, and a
  // detector whose metric first appears later starts at that metric's first point.
  size_t plan_steps = 2048;
  // Above 0: also keep each metric's series reduced for a chart to about this many steps' buckets (first, lowest,
  // highest and last point of each), in SourceScan::charts. doctor asks for them; scan does not.
  size_t chart_points = 0;
  // Above 0: also keep each metric's first and last edge_points finite points, in SourceScan::edges (kl-drift
  // compares them).
  size_t edge_points = 0;
};

// The first and last finite points of a metric, in the order they were logged.
struct SeriesEdges {
  std::vector<int64_t> head_steps, tail_steps;
  std::vector<double> head_values, tail_values;
};

// Runs every selected detector over the run's series and scores health per area. The points are replayed in step
// order (segment by segment) through the same streaming scanner that scan_source feeds while it reads.
RunScan scan_run(const Run& run, const ScanOptions& options = {});

// One run's scan, with what its file's reader had to say (bad lines, skipped files).
struct SourceScan {
  RunScan scan;
  Diagnostics diagnostics;
  std::map<std::string, ChartSeries> charts;  // by metric, with ScanOptions::chart_points > 0
  std::map<std::string, SeriesEdges> edges;   // by metric (every metric with a point), with ScanOptions::edge_points > 0
};

// scan_run with the charts and edges ScanOptions asks for (diagnostics left empty).
SourceScan scan_whole_run(const Run& run, const ScanOptions& options = {});

// Scans every run of `path` (a file, a folder of runs, "-" for stdin). Detectors are fed while the file is read,
// so memory does not grow with the log; a file whose points are not in step order (a CSV sorted by metric) is
// read a second time into a whole run and replayed in step order, and stdin is always read whole. A folder's
// files are read and scanned on `threads` threads (0: one per core), one file per task; the scans come in file
// order, as one thread gives them. `progress(done, total)` is called as files finish.
Result<std::vector<SourceScan>> scan_source(const std::string& path, const ScanOptions& options = {},
                                            unsigned threads = 0,
                                            const std::function<void(size_t, size_t)>& progress = {});

// How scan, doctor and kl-drift read a run: steps and values only (no per-point wall times or segment indices),
// which holds a 200k-step x 70-metric log in half the memory and reads it faster.
inline ReadOptions scan_read_options() {
  ReadOptions options;
  options.point_details = false;
  return options;
}
// Selection check for --only/--skip: names that match no detector id, fault type or area.
std::vector<std::string> unknown_detector_names(const std::vector<std::string>& names,
                                                const DetectorCatalog& catalog);

// Health: each finding costs weight(severity) x (0.5 + 0.5 x coverage), coverage = its share of the run's steps;
// an area's score is the product of (1 - cost) over its findings; overall is the product over all findings
// (docs/detectors.md).
HealthScores health_scores(const std::vector<Finding>& findings, const std::vector<std::string>& areas_checked,
                           int64_t first_step, int64_t last_step);
double severity_weight(Severity severity);

Json finding_json(const Finding& finding);
Json run_scan_json(const RunScan& scan);
Json scan_json(const std::vector<RunScan>& scans);
std::string scan_markdown(const std::vector<RunScan>& scans);
// Count of findings at or above `level` over all runs.
size_t findings_at_or_above(const std::vector<RunScan>& scans, Severity level);

// Replaces {name} and {name:.Ng} / {name:.Nf} in `text` by the values given; unknown names stay as written.
std::string fill_template(const std::string& text, const std::map<std::string, double>& values,
                          const std::map<std::string, std::string>& words);

// Runs one detector over test values (steps 1..n per metric); the findings it reports. For the catalog tests and
// `rldk scan --explain`-style checks.
std::vector<Finding> run_detector_on_values(const DetectorSpec& spec,
                                            const std::map<std::string, std::vector<double>>& values);

}  // namespace rldk
