// Metric bisect: find the commit that made a training metric regress. `git bisect run` does the search; the
// predicate it calls (the rldk binary itself, `rldk bisect --predicate ...`) runs the user's command, reads the
// metric from what the command logged, and compares a window aggregate with a parsed threshold — a comparison is
// parsed into an operator and a number, never evaluated as code.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rldk/json.h"
#include "rldk/result.h"

namespace rldk {

enum class CompareOp { greater, greater_equal, less, less_equal, equal, not_equal };

// "> 0.87", ">=0.5", "!= 0", "== 1e-3": an operator, then a finite number; nothing else is accepted.
struct Comparison {
  CompareOp op = CompareOp::greater;
  double threshold = 0.0;

  // False for NaN values whatever the operator: a metric that turned NaN is never "good".
  bool holds(double value) const;
  std::string describe() const;  // "> 0.87"
};
Result<Comparison> parse_comparison(std::string_view text);

// Exit codes of the predicate, as `git bisect run` reads them.
inline constexpr int BISECT_GOOD = 0;
inline constexpr int BISECT_BAD = 1;
inline constexpr int BISECT_SKIP = 125;
inline constexpr int BISECT_ABORT = 128;  // stops `git bisect run` (the predicate itself cannot work)

struct PredicateOptions {
  std::string command;  // run with /bin/sh -c in the working directory (the commit under test)
  std::string metric;   // canonical name or the name the trainer logs
  Comparison comparison;
  size_t window = 100;  // aggregate: the mean of the metric's last `window` points
  std::chrono::seconds timeout{3600};  // per command run; past it the run counts as skipped
  // Where the command's metrics go: exported as RLDK_METRICS_PATH. Empty: a fresh temporary file per run. When the
  // file stays empty the command's console output (stdout and stderr) is read instead.
  std::string metrics_path;
  std::string working_directory;  // empty: the current one
  std::string log_path;           // one line per evaluation is appended; empty: no log
};

enum class Verdict { good, bad, skip };
std::string_view verdict_name(Verdict verdict);

struct PredicateOutcome {
  Verdict verdict = Verdict::skip;
  std::optional<double> value;  // the aggregate, when the metric was found
  size_t points = 0;            // points aggregated
  std::string commit;           // HEAD of the working directory, when it is a git checkout
  std::string reason;           // for the log: why skip, or the comparison made
  bool aborted = false;         // interrupted: the whole search must stop (exit BISECT_ABORT)

  int exit_code() const;
};

// Runs the command once and judges the metric. Never fails: what goes wrong is a skip with a reason.
PredicateOutcome evaluate_bisect_predicate(const PredicateOptions& options);
// The metric aggregate of a run log (file or directory), or an error naming what is missing.
Result<std::pair<double, size_t>> read_metric_aggregate(const std::string& source, const std::string& metric,
                                                        size_t window);

struct BisectOptions {
  std::string repo_dir = ".";
  std::string good;  // a revision where the metric is fine
  std::string bad;   // a later revision where it has regressed
  PredicateOptions predicate;
  std::string predicate_binary;  // the rldk executable `git bisect run` calls; empty: this process's own
  std::string log_path = "rldk_bisect.log";
};

struct BisectResult {
  bool found = false;               // one first bad commit named
  std::string first_bad_commit;     // full hash
  std::string subject;              // its commit message's first line
  std::vector<std::string> candidates;  // when skips left several possible culprits
  size_t commits_tested = 0;
  std::string message;              // what happened, for a person (why nothing was found)
  std::string log_path;
  std::string git_output;           // what `git bisect run` printed
};

// Errors: invalid_argument (not a git repository, uncommitted changes to tracked files, a bisect already in
// progress, an unknown revision, good not an ancestor of bad), io (git could not be run). `git bisect reset` runs
// before returning, whatever happened, and on SIGINT/SIGTERM (which stop the search first).
Result<BisectResult> run_bisect(const BisectOptions& options);

Json bisect_result_json(const BisectResult& result, const BisectOptions& options);

}  // namespace rldk
