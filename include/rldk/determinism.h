// Determinism checks: run one training command as N replicas (in parallel, each in its own working directory with
// its own metrics file and the determinism environment), read back what each logged, and compare them per step,
// bitwise or within tolerances. A replica that crashed, timed out or logged nothing is an error, never a pass.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rldk/env_audit.h"
#include "rldk/json.h"
#include "rldk/process.h"
#include "rldk/reader.h"
#include "rldk/result.h"
#include "rldk/run.h"

namespace rldk {

inline constexpr const char* DETERMINISM_SCHEMA = "rldk.determinism/v1";

// -------------------------------------------------------------------------------------------------- environment

// The environment every replica gets on top of rldk's own (documented in docs/compare.md): PYTHONHASHSEED (the seed,
// default 0), CUBLAS_WORKSPACE_CONFIG=:4096:8, OMP/MKL/OPENBLAS/NUMEXPR_NUM_THREADS (threads), TOKENIZERS_PARALLELISM
// =false, PYTHONUNBUFFERED=1. The runner adds RLDK_METRICS_PATH and RLDK_REPLICA_INDEX per replica. The command
// itself may set more.
std::vector<std::pair<std::string, std::string>> determinism_environment(std::optional<int64_t> seed, int threads);

// ------------------------------------------------------------------------------------------------ replica runner

struct ReplicaRunOptions {
  std::string command;  // run as `/bin/sh -c command` in the replica's working directory
  size_t replicas = 2;
  // Replicas running at the same time; 0: the number of cores (never more than `replicas`).
  size_t parallel = 0;
  // Wall-clock limit per replica; the process group gets SIGTERM, then SIGKILL after `kill_grace`.
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};
  std::chrono::milliseconds kill_grace{5'000};
  // Each replica runs in work_root/replica_<i> (created, must not hold files of an earlier check).
  std::string work_root;
  std::vector<std::pair<std::string, std::string>> environment;  // e.g. determinism_environment()
  std::string metrics_file_name = "metrics.jsonl";              // RLDK_METRICS_PATH inside the working directory
  // Bytes of each stream kept in memory (the end of it) for hints and reports; the whole stream goes to a file.
  size_t tail_bytes = size_t{64} << 10;
};

struct ReplicaOutcome {
  size_t index = 0;
  std::string work_dir;
  std::string metrics_path;
  std::string stdout_path, stderr_path;  // complete captured output
  std::string stdout_tail, stderr_tail;  // the last tail_bytes
  std::optional<ExitStatus> status;      // absent when it could not start
  bool timed_out = false;
  std::string start_error;               // why it could not start
  double seconds = 0.0;                  // wall-clock run time (kept out of reports, which stay byte-stable)
  double timeout_seconds = 0.0;          // the limit it ran under

  bool succeeded() const { return status && status->success() && !timed_out; }
  std::string describe() const;  // "exit code 0", "killed by SIGKILL", "timed out (limit 600.0 s)", ...
};

// Runs the replicas, at most `parallel` at a time, and waits for all of them. Errors: invalid_argument (empty
// command, zero replicas), io (the work root cannot be created). A replica that fails is an outcome, not an error.
Result<std::vector<ReplicaOutcome>> run_replicas(const ReplicaRunOptions& options);

// What a replica logged: its metrics file when it wrote one, else its console output (any format the readers know).
// Several run ids in one file are merged into one run. Errors: unrecognized when it logged nothing readable.
Result<Run> load_replica_metrics(const ReplicaOutcome& outcome, const ReadOptions& read = {});

// ------------------------------------------------------------------------------------------ replica comparison

struct ReplicaCompareOptions {
  std::vector<std::string> metrics;  // canonical names to compare (required)
  std::vector<int64_t> steps;        // only these steps; empty: every step the reference logged
  // Bitwise: float64 bit patterns must be equal (all NaNs count as equal). Otherwise |x - ref| <= atol + rtol*|ref|.
  bool bitwise = true;
  double rtol = 0.0;
  double atol = 0.0;
  // Compare only the steps that every replica logged (replay: the re-run may be shorter); otherwise a step that a
  // replica lacks is a divergence at that step.
  bool common_steps_only = false;
};

struct MetricReplicaComparison {
  std::string name;
  uint64_t steps_compared = 0;
  uint64_t divergent_steps = 0;             // steps where some replica differs from the reference
  std::optional<int64_t> first_divergent_step;
  size_t first_divergent_replica = 0;
  std::string first_divergent_reason;      // "value" or "missing"
  double max_abs_deviation = 0.0;          // max over steps and replicas of |x - ref| (finite pairs)
  double max_rel_deviation = 0.0;          // |x - ref| / |ref| at the same comparisons (ref != 0)
  int64_t max_deviation_step = 0;
  size_t max_deviation_replica = 0;
  uint64_t max_ulp = 0;                    // largest distance in units in the last place
  std::vector<int64_t> steps;              // compared steps
  std::vector<double> spread;              // per compared step: max - min across replicas (NaN if any is NaN)
  std::vector<std::vector<double>> values;  // [replica][i] at steps[i] (NaN where missing), for plots
  bool passed() const { return !first_divergent_step.has_value(); }
};

struct ReplicaComparison {
  std::vector<MetricReplicaComparison> metrics;
  std::vector<std::string> errors;  // a metric that some replica never logged, no common step, ...
  bool passed() const;              // no error and no divergent metric
};

// What to compare when the user names nothing: the important canonical metrics (diff_default_signals) every
// replica logged, else every metric they all logged.
std::vector<std::string> default_replica_metrics(const std::vector<Run>& replicas);

// replicas[0] is the reference.
ReplicaComparison compare_replicas(const std::vector<Run>& replicas, const ReplicaCompareOptions& options);

// Distance between two doubles in units in the last place (bits as ordered integers; +0 and -0 are 0 apart).
uint64_t ulp_distance(double a, double b);

// -------------------------------------------------------------------------------------------------------- hints

struct CulpritHint {
  std::string id;        // stable, e.g. "cublas_workspace", "unseeded_from_first_step"
  std::string message;   // what it suggests, for an RL engineer
  std::string fix;
  std::vector<std::string> evidence;  // "replica 1 stderr: <line>", or the fact it rests on
};

// Hints from stderr/stdout patterns of the replicas and from the shape of the divergence.
std::vector<CulpritHint> culprit_hints(const std::vector<ReplicaOutcome>& outcomes,
                                       const ReplicaComparison& comparison, int64_t first_logged_step);

// -------------------------------------------------------------------------------------------------------- report

struct DeterminismReport {
  std::string command;
  size_t replicas = 0;
  size_t parallel = 0;
  double timeout_seconds = 0.0;
  ReplicaCompareOptions compare;
  std::vector<std::pair<std::string, std::string>> environment;
  std::vector<ReplicaOutcome> outcomes;
  std::vector<std::string> replica_errors;  // crashed, timed out, logged nothing: "replica 2: ..."
  ReplicaComparison comparison;
  std::vector<CulpritHint> hints;
  std::optional<EnvAudit> env_audit;  // when an audit ran: its JSON (rldk.env-audit/v1), Markdown and card table

  // "pass", "fail" or "error" (an error wins over a failure: a broken replica proves nothing).
  std::string verdict() const;
};

Json determinism_json(const DeterminismReport& report);
std::string determinism_text(const DeterminismReport& report);
std::string determinism_markdown(const DeterminismReport& report);
// Determinism card: verdict, per-metric table, and per metric the replicas overlaid and their per-step spread.
std::string determinism_html(const DeterminismReport& report);

}  // namespace rldk
