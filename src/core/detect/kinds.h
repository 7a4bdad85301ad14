// The detector kinds: the small set of streaming state machines that every catalog detector instantiates with its
// own metrics and parameters. docs/detectors.md describes each kind's rule in words.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rldk/scan.h"

namespace rldk::detect {

// A detector instance over one run. The driver feeds points of the first input in order, with the latest value of
// every other input carried forward (NaN before its first point); a step that goes backwards (a restart) resets
// the state, so a resumed trainer is not read as a change.
class Detector {
 public:
  explicit Detector(const DetectorSpec& spec) : spec_(spec) {}
  virtual ~Detector() = default;
  Detector(const Detector&) = delete;
  Detector& operator=(const Detector&) = delete;

  virtual void reset() = 0;
  // x[i] is the value of input i at this step.
  virtual void observe(int64_t step, const double* x) = 0;
  // End of data: close an open episode.
  virtual void finish() = 0;

  std::vector<Finding>& findings() { return findings_; }
  // Steps of the episodes confirmed since the driver last cleared this (see alarm()). The scan reads findings; a
  // live driver (a rule that names this detector) acts on these and clears them.
  std::vector<int64_t>& alarms() { return alarms_; }
  // Per alarm (same order), what the kind knew of the episode when it confirmed it, where it reports the episode
  // later (a level shift re-armed to measure how long it lasts): its level and baseline, for a live rule to judge
  // as the scan will judge the finding. Empty where the finding is reported with the alarm, or the kind has none.
  std::vector<std::map<std::string, double>>& alarm_evidence() { return alarm_evidence_; }
  // Canonical names of the inputs as resolved for this run (same order as spec().inputs).
  std::vector<std::string> metric_names;
  // Per input, the step its value in x was logged at, set by the driver before each observe (empty: every value
  // was logged at the observed step). A context input logged less often than the watched metric (a reward every 4
  // steps beside an entropy logged at each) is carried forward, so its value repeats; a kind that keeps statistics
  // of that input (its start level, its noise) counts each logged value once.
  std::vector<int64_t> input_steps;
  const DetectorSpec& spec() const { return spec_; }
  // Live only: the run printed a setting that lowers this detector's findings one severity (an entropy bonus), so a
  // warning would be a note. A kind whose episodes can reach a critical level (bound) then raises its alarm only at
  // that level, which lowers to a warning; the live driver raises no alarm of the other kinds.
  void hold_warnings(bool hold) { hold_warnings_ = hold; }

 protected:
  // Builds a finding from an episode's fields and the evidence; fills the explanation from the template.
  // `words` adds text fields for the template (clauses a kind words itself, e.g. one that depends on the data).
  void report(int64_t onset, int64_t end, int64_t peak_step, double peak_value, std::map<std::string, double> evidence,
              const std::map<std::string, std::string>& words = {});
  // Called by a kind at the point where it confirms an episode: from here on the episode will be reported (at once
  // or when it ends), so a live monitor can raise it now. `step` is the episode's last step at that point.
  void alarm(int64_t step, std::map<std::string, double> evidence = {}) {
    alarms_.push_back(step);
    alarm_evidence_.push_back(std::move(evidence));
  }
  const DetectorSpec& spec_;
  std::vector<Finding> findings_;
  std::vector<int64_t> alarms_;
  std::vector<std::map<std::string, double>> alarm_evidence_;
  bool hold_warnings_ = false;
};

// The numeric parameters a kind reads, all required in the catalog (so the data file is where defaults live).
// nullptr for an unknown kind.
const std::vector<std::string>* kind_parameters(const std::string& kind);
// Word options a kind reads, each with its allowed values (the first one is the default).
struct KindOption {
  std::string name;
  std::vector<std::string> allowed;
};
const std::vector<KindOption>& kind_options(const std::string& kind);
const std::vector<std::string>& detector_kinds();

std::unique_ptr<Detector> make_detector(const DetectorSpec& spec);
// Kinds the scan driver judges itself, from whole-run facts it keeps for every metric, over every metric
// (non_finite) or a family of them by name (never_positive): no Detector instance, and no live rule.
bool judged_over_metrics(const std::string& kind);

// Makes a finding less severe because the run's own course or settings explain it, and says why: `because` (a
// sentence with its leading space) ends the explanation and is kept as Finding::eased_because.
void ease(Finding& f, Severity to, const std::string& because);

// A relative detector's finding (a shift, a drift, a spike judged against the run's own history) whose metric stayed
// inside its healthy range (data/metrics.yaml) becomes a note: the scan applies it to every finding, and a live rule
// to the finding reported with its alarm (a spike, reported at its first point back).
void apply_healthy_range(const DetectorSpec& spec, Finding& f);

// Catalog parameters that count points (warm-ups, windows, how long a condition must hold) are written for a run
// logged at every optimizer step, so they are counts of steps. A run logged every `interval` steps (TRL's
// logging_steps of 5-20) reaches them in 1/interval as many points: the copy returned has each such count divided
// by the interval, never below a floor that keeps its statistics meaningful (or the original, if that is smaller).
// Rates, thresholds and memory bounds are left alone. interval <= 1 returns the spec unchanged.
DetectorSpec for_logging_interval(const DetectorSpec& spec, double interval);
// A series' logging interval in steps: the median gap between its logged steps (a step going back, a restart, is
// not a gap); 1 without a gap. The scan takes it from the run's densest series.
double logging_interval(const std::vector<int64_t>& steps);
// The run's logging interval: that of its densest series.
double logging_interval(const Run& run);

}  // namespace rldk::detect
