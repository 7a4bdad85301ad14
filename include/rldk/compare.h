// Run comparison: align two runs' metrics by step, find where they first diverge, and summarise the difference.
//
// First divergence is an online state machine over the aligned difference d_t = b_t - a_t, standardised by a noise
// scale sigma that is estimated from the data (robust: MAD of each run's first differences) or given (e.g. from
// replicas of the same configuration). Three tests run on z_t = d_t / sigma: a spike test on |z_t|, a two-sided CUSUM
// on z_t (level shifts, constant offsets, slow drifts), and a non-finite test. When one fires, the onset is
// estimated by a least-squares fit of a step model and a ramp model over the recent differences, which also tells a
// level shift from a drift. docs/compare.md documents the thresholds and the false-alarm / delay trade-off.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rldk/json.h"
#include "rldk/metric_dictionary.h"
#include "rldk/provenance.h"
#include "rldk/reader.h"
#include "rldk/result.h"
#include "rldk/run.h"

namespace rldk {

inline constexpr const char* DIFF_SCHEMA = "rldk.diff/v1";

// ---------------------------------------------------------------------------------------------------- alignment

// A series reduced to one value per step, steps ascending. When a trainer restarted and logged a step again, the
// value from the last segment covering that step wins (the resumed run is the one that continued).
struct StepValues {
  std::vector<int64_t> steps;
  std::vector<double> values;
  uint64_t overridden = 0;  // points replaced by a later point at the same step (restarts, duplicate logging)
};
StepValues step_values(const Series& series);

// Two series joined on the steps both logged. Different logging intervals are compared at their common steps only;
// nothing is interpolated.
struct AlignedPair {
  std::vector<int64_t> steps;
  std::vector<double> a;
  std::vector<double> b;
  uint64_t only_a = 0;  // steps logged by A only
  uint64_t only_b = 0;
};
AlignedPair align(const StepValues& a, const StepValues& b);

// ---------------------------------------------------------------------------------------------- first divergence

struct DivergenceOptions {
  // Points buffered before the tests are armed, to estimate the noise scale; they are then tested like the rest, so
  // a divergence inside the warm-up is still found at its step (and reported once the warm-up ends).
  size_t warmup = 16;
  // Rolling window of first differences behind the robust noise estimate (O(window) per point).
  size_t noise_window = 128;
  // Spike test: |z| above this alarms at once. 6 sigma: about 2e-9 false alarms per point on Gaussian noise.
  double spike_z = 6.0;
  // Two-sided CUSUM (reference value k, decision interval h, in sigma units). k = 0.5, h = 12: ARL0 about 500,000
  // points per signal with a known sigma (about 60,000 measured with the estimated one); mean delay about 24 points
  // for a 1-sigma shift, 9 for 2 sigma, 5 for 3 sigma. See docs/compare.md for the trade-off.
  double cusum_k = 0.5;
  double cusum_h = 12.0;
  // Points kept for the onset estimate (least-squares step and ramp fits when an alarm fires).
  size_t onset_window = 256;
  // After a CUSUM alarm, the onset and kind are refined once this many more points have arrived (or at the end of
  // the data): a few points past the alarm tell a level shift from a drift far better than the alarm point alone.
  size_t refine_points = 16;
  // A level shift whose onset is within this many points of the first common step is a constant offset.
  size_t offset_points = 3;
  // Floor of the noise scale, so runs with no step-to-step noise (exact replicas up to a point) still get a finite
  // z: max(abs, rel * median |value|).
  double sigma_floor_abs = 1e-12;
  double sigma_floor_rel = 1e-9;
  // Known noise scale of d_t (e.g. from replicas); when set, nothing is estimated and there is no warm-up.
  std::optional<double> sigma;
  // The metric's healthy range (data/metrics.yaml): a point where one run is beyond a critical level and the other
  // is not is a divergence whatever the noise says. Domain knowledge needs no history, so a run stopped after four
  // steps with a KL of 3 nats against the other's 0.0002 has diverged, though four points give no noise estimate.
  std::optional<HealthyRange> healthy;
};

struct Divergence {
  bool diverged = false;
  int64_t onset_step = 0;     // estimated first step of the divergence
  int64_t detected_step = 0;  // step at which the online detector alarmed (onset <= detected)
  std::string kind;           // spike | level_shift | offset | drift | non_finite
  std::string detector;       // spike | cusum | non_finite
  double magnitude = 0.0;     // b - a at the onset for a spike; mean shift or slope-times-span otherwise (units of the metric)
  double z = 0.0;             // magnitude in noise units
  double sigma = 0.0;         // noise scale used
  std::string sigma_source;   // "data" (first differences of both runs), "given"
};

// Feed aligned points in step order; the state is O(noise_window + onset_window). Once diverged, it stays so.
class DivergenceDetector {
 public:
  explicit DivergenceDetector(DivergenceOptions options = {});
  ~DivergenceDetector();
  DivergenceDetector(DivergenceDetector&&) noexcept;
  DivergenceDetector& operator=(DivergenceDetector&&) noexcept;
  // Returns true on the point at which the divergence is detected.
  bool push(int64_t step, double a, double b);
  // End of data: points still in the warm-up are tested with what noise estimate there is; a pending spike is
  // classified.
  void finish();
  const Divergence& result() const;

 private:
  class State;  // the tests' state, built on the engine's shared statistics (src/core/stats)
  std::unique_ptr<State> state_;
};

// Robust noise scale of one run from its first differences: 1.4826 * MAD(diff) / sqrt(2). Used by the detector and
// by `rldk diff --noise-run`. NaN when fewer than 2 finite differences.
double first_difference_sigma(const std::vector<double>& values);
// 1.4826 * median |x - median(x)| over finite values; NaN for none.
double robust_scale(std::vector<double> values);

// Noise scale of d_t per signal from replicas of A (same configuration, other seeds): the robust scale of
// replica - A over all common steps of all replicas, i.e. what "no real change" looks like. Signals without a
// finite estimate are left out.
std::map<std::string, double> replica_noise_sigma(const Run& a, const std::vector<Run>& replicas,
                                                  const std::vector<std::string>& signals);

// ---------------------------------------------------------------------------------------------------------- diff

struct DiffOptions {
  // Canonical metric names; empty: the important canonical metrics present in both runs (diff_default_signals()),
  // or every metric both runs have when none of those is present.
  std::vector<std::string> signals;
  DivergenceOptions divergence;
  // Per-signal noise scales of d_t (e.g. from replicas); they replace the data estimate for those signals.
  std::map<std::string, double> sigma_by_signal;
};

// The metrics `rldk diff` compares by default, in priority order.
const std::vector<std::string>& diff_default_signals();

struct SignalDiff {
  std::string name;
  uint64_t common_steps = 0;
  uint64_t only_a = 0, only_b = 0;
  uint64_t overridden_a = 0, overridden_b = 0;  // points replaced at restarts (see StepValues)
  double mean_a = 0.0, mean_b = 0.0;            // over common finite pairs
  double mean_drift = 0.0;                      // mean of b - a over common finite pairs (signed)
  double max_abs_delta = 0.0;                   // over common pairs with both values finite
  int64_t max_abs_delta_step = 0;
  double max_a = 0.0, max_b = 0.0;              // both values at that step
  std::optional<int64_t> first_difference_step;  // first common step whose values differ at all (bitwise)
  Divergence divergence;
  AlignedPair aligned;                          // for the drift card's plots
};

struct DiffReport {
  std::string path_a, path_b;
  std::string run_a, run_b;
  std::vector<SignalDiff> signals;  // in the order requested
  std::vector<std::string> missing;  // requested signals absent from one run, as "name (absent from B)"
  // The signal that diverged first (earliest detection; ties: earliest onset, then largest |z|); empty: none.
  std::string first_signal;
  uint32_t segments_a = 0, segments_b = 0;
  // When both runs have an rldk_manifest.json (rldk.tracking) beside their logs: what they were made of, compared.
  std::optional<provenance::ManifestDiff> manifests;
  std::string manifest_note;  // why the manifests could not be compared (one unreadable), else empty
};

// Errors: invalid_argument when no requested signal is present in both runs.
Result<DiffReport> diff_runs(const Run& a, const Run& b, const DiffOptions& options = {});

Json diff_json(const DiffReport& report, const DiffOptions& options);
std::string diff_text(const DiffReport& report);
std::string diff_markdown(const DiffReport& report);
// Self-contained HTML drift card: per signal, both runs overlaid and the onset marked.
std::string diff_html(const DiffReport& report);

// Reads a source that should hold one run (a file, or a folder with one run). `run_id` picks one when it holds
// several; without it, several runs from one file are merged (their metrics rarely overlap) and runs from several
// files are an error that lists their ids.
Result<Run> read_one_run(const std::string& path, const std::string& run_id = "", ReadOptions options = {});

// Merges every run read from one source into one: series of the same name are concatenated (first run first).
// Readers split a file by run id; a replica's metrics file is one run even when it names several ids.
Run merge_runs(std::vector<Run> runs);

}  // namespace rldk
