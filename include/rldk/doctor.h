// `rldk doctor` and `rldk forensics kl-drift`: focused reports built on the scan.
//
// doctor = scan + environment audit (rldk/env_audit.h) + a report card: DIR/doctor.json (rldk.doctor/v1,
// docs/schemas/rldk.doctor.v1.schema.json), DIR/doctor.md and a self-contained DIR/doctor.html with one SVG chart
// per implicated metric (finding ranges shaded, onsets marked).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rldk/env_audit.h"
#include "rldk/json.h"
#include "rldk/run.h"
#include "rldk/scan.h"

namespace rldk {

inline constexpr const char* DOCTOR_SCHEMA = "rldk.doctor/v1";
inline constexpr const char* KL_DRIFT_SCHEMA = "rldk.kl-drift/v1";

// KL over the run: early reference vs the end, plus every KL-area finding (spike, level shift, drift, controller).
struct KlDriftReport {
  std::string run_id;
  std::string metric;            // the KL series used; empty when the run has none
  int64_t reference_first = 0, reference_last = 0;
  double reference_mean = 0, reference_sigma = 0;  // robust sigma (1.4826 x MAD)
  int64_t recent_first = 0, recent_last = 0;
  double recent_mean = 0;
  double ratio = 0;              // recent_mean / reference_mean (NaN when the reference is 0)
  double change_sigma = 0;       // (recent - reference) / reference_sigma
  bool drift = false;            // a kl_drift or kl_level_shift finding exists
  std::vector<Finding> findings;  // KL-area findings
};

// reference_points / recent_points: sizes of the early and late windows compared in the summary. The scan options
// that give a SourceScan what the report needs (the KL detectors, the KL series' first and last points), so that
// kl-drift reads a log as scan does, while streaming.
ScanOptions kl_drift_scan_options(size_t reference_points, size_t recent_points);
KlDriftReport kl_drift_report(const SourceScan& source, size_t reference_points = 100, size_t recent_points = 100);
// The same from a whole run.
KlDriftReport kl_drift_report(const Run& run, size_t reference_points = 100, size_t recent_points = 100);
Json kl_drift_json(const std::vector<KlDriftReport>& reports);
std::string kl_drift_text(const std::vector<KlDriftReport>& reports);

// How many step buckets doctor keeps per metric for its charts (ScanOptions::chart_points).
inline constexpr size_t DOCTOR_CHART_POINTS = 1024;

struct DoctorReport {
  RunScan scan;
  std::map<std::string, ChartSeries> charts;  // by metric (SourceScan::charts); implicated metrics are drawn
  std::optional<EnvAudit> audit;   // absent when the audit could not run
  std::string audit_error;
};

// Verdict: "fail" with a critical finding or a failed audit check, "warn" with a warning, else "pass".
std::string doctor_verdict(const DoctorReport& report);
// What went wrong and when it started, in a sentence or two: the first finding of warning level or worse and the
// worst one (or that there were none), and an environment audit problem when there is one.
std::string doctor_headline(const DoctorReport& report);
Json doctor_json(const DoctorReport& report);
std::string doctor_markdown(const DoctorReport& report);
std::string doctor_html(const DoctorReport& report);

}  // namespace rldk
