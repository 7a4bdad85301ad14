// Trusted evaluation: is checkpoint B really better than A, and how sure are we? (`rldk evals`, docs/evals.md)
//
// Two layers. The numeric one is rliable's aggregates with their exact definitions (mean and median of task means,
// IQM trimming floor(NM/4) pooled scores from each end, optimality gap, probability of improvement with the 1/2 tie
// rule), stratified bootstrap intervals (percentile and BCa, deterministic under a seed), performance profiles
// with bands, and the two-arm tests a design calls for: paired (same items), seeds (Welch's t, Hedges' g, Mann-
// Whitney U), a two-level bootstrap (seeds, then items), Holm's correction and power (methods.md §1). The report
// layer reads eval results (a results table, per-item outputs, `eval/*` metrics of run logs), picks the design per
// task and writes the eval card.
//
// Scores of one arm are kept per task: scores[task][run]. With the same number of runs on every task this is
// rliable's (runs x tasks) matrix, transposed; unequal counts are allowed (the strata are the tasks).
//
// Directions are never mixed: every comparison is stated as an improvement of B over A in the task's own
// direction (lower-is-better scores are negated for the comparison), and aggregates over tasks are only taken over
// tasks of one direction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rldk/diagnostics.h"
#include "rldk/json.h"
#include "rldk/result.h"

namespace rldk::evals {

inline constexpr const char* EVALS_SCHEMA = "rldk.evals/v1";
inline constexpr double NA = std::numeric_limits<double>::quiet_NaN();

using TaskScores = std::vector<std::vector<double>>;  // [task][run]

// ---- rliable's aggregates (rliable/metrics.py) ----

// scipy.stats.trim_mean(v, proportion): drops int(proportion * n) values from each end and averages the rest.
// Reorders v. NaN when v is empty.
double trimmed_mean(std::span<double> v, double proportion);
double aggregate_mean(const TaskScores& scores);       // mean of task means
double aggregate_median(const TaskScores& scores);     // median of task means
double aggregate_iqm(const TaskScores& scores);        // trimmed_mean(all pooled scores, 0.25)
double optimality_gap(const TaskScores& scores, double gamma = 1);  // gamma - mean(min(x, gamma)) over all scores
// P(X > Y): per task, the share of (x, y) run pairs with x > y, ties counting 1/2; averaged over tasks. x and y
// have the same tasks (their run counts may differ).
double probability_of_improvement(const TaskScores& x, const TaskScores& y);

enum class Aggregate { mean, median, iqm, optimality_gap };
const char* aggregate_name(Aggregate a);
double aggregate(Aggregate a, const TaskScores& scores, double gamma = 1);

// ---- bootstrap ----

enum class IntervalMethod { percentile, bca };

struct BootstrapOptions {
  size_t reps = 50000;          // rliable's default for aggregates (2,000 for profiles and P(X > Y))
  double confidence = 0.95;
  IntervalMethod method = IntervalMethod::percentile;
  uint64_t seed = 0;            // same seed, same replicates, on every machine (own generator, not std::)
  bool task_bootstrap = false;  // also resample the tasks (uncertainty over the task set, rliable's option)
};

struct Interval {
  double estimate = NA, low = NA, high = NA;
  std::string note;  // why an interval is missing or which method stood in (BCa falls back to percentile)
};

// Stratified bootstrap (rliable's StratifiedBootstrap): each replicate draws, within every task independently,
// as many runs with replacement as the task has. BCa's acceleration comes from the jackknife leaving one run index
// out of every task (arch's leave-one-out over rliable's run axis); its bias correction from the share of
// replicates below the estimate, ties counting 1/2 (SciPy's rule).
Interval stratified_bootstrap(const TaskScores& scores, const std::function<double(const TaskScores&)>& statistic,
                              const BootstrapOptions& options);
Interval stratified_bootstrap(const TaskScores& scores, Aggregate a, const BootstrapOptions& options,
                              double gamma = 1);
// P(X > Y) with both arms resampled independently within each task (rliable's StratifiedIndependentBootstrap).
// BCa is not offered for two samples (arch refuses it too); percentile is used and said in the note.
Interval probability_of_improvement_interval(const TaskScores& x, const TaskScores& y,
                                             const BootstrapOptions& options);
// One sample (e.g. paired differences): the bootstrap distribution of the mean, as scipy.stats.bootstrap with
// method='percentile' or 'BCa'.
Interval bootstrap_mean(std::span<const double> values, const BootstrapOptions& options);

// ---- performance profiles ----

struct Profile {
  std::vector<double> tau, fraction, low, high;  // fraction of runs scoring above tau, averaged over tasks
};
// rliable's run-score distribution with percentile bands of a stratified bootstrap (reps from options).
Profile performance_profile(const TaskScores& scores, std::span<const double> tau, const BootstrapOptions& options);
// n points evenly from the smallest to the largest score of all arms (np.linspace).
std::vector<double> tau_grid(const std::vector<const TaskScores*>& arms, size_t n);

// ---- two-arm tests ----

struct WelchTest {
  size_t n_a = 0, n_b = 0;
  double mean_a = NA, mean_b = NA, difference = NA;  // mean_b - mean_a
  double t = NA, df = NA, p_value = NA;              // two-sided (scipy.stats.ttest_ind(b, a, equal_var=False))
  double ci_low = NA, ci_high = NA;                  // of the difference, Welch-Satterthwaite t interval
};
WelchTest welch_t_test(std::span<const double> a, std::span<const double> b, double confidence = 0.95);

struct EffectSize {
  double value = NA, ci_low = NA, ci_high = NA;
};
// Hedges' g of b over a: Cohen's d with the pooled SD times J = 1 - 3 / (4 (n_a + n_b) - 9); interval from its
// large-sample standard error sqrt((n_a + n_b) / (n_a n_b) + g^2 / (2 (n_a + n_b))).
EffectSize hedges_g(std::span<const double> a, std::span<const double> b, double confidence = 0.95);

struct MannWhitney {
  double u = NA;        // U of b over a: pairs with b > a, ties 1/2 (scipy.stats.mannwhitneyu(b, a).statistic)
  double p_value = NA;  // two-sided
  bool exact = false;   // SciPy's method='auto': exact when both samples have <= 8 values and no ties
};
MannWhitney mann_whitney_u(std::span<const double> a, std::span<const double> b);

struct PairedTest {
  size_t n = 0;
  double mean_difference = NA, sd_difference = NA;  // of d = b - a
  double t = NA, df = NA, p_value = NA;             // two-sided (scipy.stats.ttest_rel(b, a))
  double ci_low = NA, ci_high = NA;                 // t interval of the mean difference
  double effect_dz = NA;                            // mean / sd of the differences
};
PairedTest paired_t_test(std::span<const double> differences, double confidence = 0.95);

// Seeds x items of each arm on the same items ([seed][item], every row as long as the item count). Each replicate
// resamples the seeds of each arm independently, then the items once for both arms (they are the same items), and
// takes mean(B) - mean(A) of the resampled cells. Percentile interval.
Interval two_level_bootstrap(const std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b,
                             const BootstrapOptions& options);

// Holm's step-down adjusted p-values, in the order given (NaN stays NaN and does not count).
std::vector<double> holm_adjust(std::span<const double> p_values);

// ---- length-controlled win rate (judge and pairwise evals) ----

// RL policies grow longer and judges reward length, so a raw win rate of B over A mixes quality with length. Least
// squares of the preference on the length difference, preference = intercept + slope x (len_b - len_a), gives the
// intercept: the expected preference for B at equal length. Both and the raw win rate carry percentile intervals of
// a bootstrap over items.
struct LengthControlled {
  size_t n = 0;
  Interval win_rate;    // mean preference for B (1 win, 0 loss, 1/2 tie, or a judge's probability)
  Interval intercept;   // length-controlled win rate: the preference at equal length
  Interval slope;       // change in preference per unit of length difference
  double mean_length_difference = NA;
};
LengthControlled length_controlled_win_rate(std::span<const double> preference,
                                            std::span<const double> length_difference,
                                            const BootstrapOptions& options);

// Pairwise judge results read from a table, per task: the preference for B and len(B) - len(A) of every item.
struct JudgeColumns {
  std::string preference, length_a, length_b, output_a, output_b, task;  // empty: found by name
};

struct WinRateTask {
  std::string task;
  LengthControlled result;
};

struct WinRateReport {
  std::vector<std::string> sources;
  std::string length_unit;  // "given" (length columns) or "words" (counted in the outputs)
  size_t skipped = 0;       // rows without a preference or a length
  std::vector<WinRateTask> tasks;  // "all" first when there are several tasks
  double confidence = 0.95;
};

inline constexpr const char* EVALS_WINRATE_SCHEMA = "rldk.evals-winrate/v1";

// `rldk evals winrate`: preference column (1 or "b" = B won, 0 or "a" = A won, 0.5 or "tie"; a probability), and
// either both lengths or both outputs (lengths then counted in words).
Result<WinRateReport> length_controlled_report(const std::vector<std::string>& sources, const JudgeColumns& columns,
                                               const BootstrapOptions& options, Diagnostics& diagnostics);
Json winrate_json(const WinRateReport& report);
std::string winrate_markdown(const WinRateReport& report);

// ---- Student's t and power (Colas et al. 2018, methods.md §1.2) ----

double student_t_cdf(double t, double df);
double student_t_quantile(double p, double df);
// Power of Welch's test with n seeds per arm to detect a difference `effect` given SDs s_a, s_b (Colas' compute_beta:
// nu = (s_a^2 + s_b^2)^2 (n - 1) / (s_a^4 + s_b^4), power = 1 - F_nu(t_{1-alpha', nu} - effect / sqrt((s_a^2 +
// s_b^2) / n)), alpha' = alpha / 2 when two-sided).
double welch_power(double effect, double sd_a, double sd_b, size_t n, double alpha, bool two_sided);
// Smallest n >= 2 with welch_power >= power; 0 when not reached by max_n.
size_t seeds_needed(double effect, double sd_a, double sd_b, double alpha, double power, bool two_sided,
                    size_t max_n = 100000);
// The same for a paired test on n items whose differences have SD sd_d (nu = n - 1).
double paired_power(double effect, double sd_d, size_t n, double alpha, bool two_sided);
size_t items_needed(double effect, double sd_d, double alpha, double power, bool two_sided, size_t max_n = 10000000);

// ---- eval results: what the commands read ----

// Column names to use instead of the ones found by name (see eval_table.cpp). Empty: found automatically.
struct EvalColumns {
  std::string arm, seed, task, item, score;
};

struct EvalCell {
  uint32_t arm = 0, task = 0;
  std::string seed;  // as written ("" when the source has no seed column: one run)
  std::string item;  // "" when the source has no item column (one score per run and task)
  double score = NA;
};

// Eval results of several arms (checkpoints, algorithms), long form: one score per arm, seed, task (and item).
struct EvalData {
  std::vector<std::string> arms, tasks, sources;
  std::vector<EvalCell> cells;
  // Tasks a reader knows to be lower-is-better (run-log metrics named like a loss or a perplexity); evaluate()
  // treats them as if given in EvalsOptions::lower_is_better.
  std::vector<std::string> lower_is_better;
  uint32_t arm_index(const std::string& name);
  uint32_t task_index(const std::string& name);
};

struct EvalReadOptions {
  EvalColumns columns;
  // Arm of rows without an arm column: this name, else the file's stem (each file one checkpoint).
  std::string arm;
};

// A results table (arm, seed, task, score: rliable's input) or per-item eval outputs (item id, task, score or
// correct), as CSV, JSONL (gzip/zstd too) or Parquet, or a folder of them. Rows without a score are reported in
// diagnostics and skipped; an error when the file cannot be read or has no score column.
Status read_eval_results(const std::string& path, const EvalReadOptions& options, EvalData& data,
                         Diagnostics& diagnostics);

enum class EvalAt { last, best, step };

struct RunEvalOptions {
  EvalAt at = EvalAt::last;
  int64_t step = 0;                            // with EvalAt::step: the last eval at or before it
  std::string arm;                             // default: the path's stem
  // Which metrics are lower-is-better (their best is their minimum; comparisons are negated). Default: names with
  // "loss" or "perplexity", recorded in EvalData::lower_is_better.
  std::vector<std::string> lower_is_better;
};

// `eval/*` metrics of run logs (every format rldk reads): each run of `path` is one seed of the arm, each metric
// one task, scored at the last, best or chosen evaluation.
Status read_run_evals(const std::string& path, const RunEvalOptions& options, EvalData& data,
                      Diagnostics& diagnostics);

// What was read, for `rldk evals validate`: per arm and task the seeds, items and scores, and which comparison
// design the first two arms would get. Markdown.
std::string eval_data_markdown(const EvalData& data);

// ---- suites (data/eval_suites.yaml): named probes over the columns of a per-sample or per-step table ----

struct SuiteProbe {
  std::string name, description;
  std::vector<std::string> columns;  // the first one the table has is measured
  std::string direction;             // "higher" | "lower" | "none" (context only)
  std::string kind = "column";       // "column": the column's mean | "lexicon": share of texts with a phrase
  std::vector<std::string> phrases;  // lexicon probes, lower-case
};

struct Suite {
  std::string name;
  std::vector<std::string> probes;
  std::vector<std::string> not_built;  // the older tool's probes with no counterpart here, reported as skipped
};

struct Suites {
  std::vector<SuiteProbe> probes;
  std::vector<Suite> suites;
  const SuiteProbe* probe(const std::string& name) const;
  const Suite* suite(const std::string& name) const;
};

// Parses a suites file (the format of data/eval_suites.yaml); an error names what is wrong.
Result<Suites> suites_from_yaml(std::string_view text, const std::string& origin);
const Suites& builtin_suites();  // data/eval_suites.yaml, compiled in
std::string suites_markdown(const Suites& suites);

struct ProbeResult {
  std::string probe, description, direction, kind;
  std::string status;   // "measured" | "skipped"
  std::string column;   // the column measured
  std::string reason;   // why skipped
  size_t n = 0;         // finite values
  Interval mean;        // bootstrap interval over rows
};

struct SuiteReport {
  std::string suite;
  double confidence = 0.95;
  std::vector<std::string> sources;
  size_t rows = 0;
  std::vector<ProbeResult> probes;
};

inline constexpr const char* EVALS_SUITE_SCHEMA = "rldk.evals-suite/v1";

// Reads every numeric column of the sources (JSONL, CSV, Parquet) and runs the suite's probes. Errors: an unknown
// suite, an unreadable source.
Result<SuiteReport> evaluate_suite(const std::vector<std::string>& sources, const Suites& suites,
                                   const std::string& suite, const BootstrapOptions& options,
                                   Diagnostics& diagnostics);
Json suite_json(const SuiteReport& report);
std::string suite_markdown(const SuiteReport& report);

// ---- the report ----

enum class Direction { higher, lower };

struct EvalsOptions {
  std::string a, b;                           // arms to compare (default: the first two read)
  std::vector<std::string> lower_is_better;   // tasks whose lower scores are better; every other is higher
  BootstrapOptions bootstrap{.reps = 10000};  // the interval method applies to the paired and aggregate intervals
  double margin = 0;         // --gate: exit 1 when B is worse than A by more than this, at the stated confidence
  double effect = NA;        // smallest improvement worth detecting, for power (default: margin, else observed)
  double power = 0.8;        // wanted power of the seeds/items-needed figures
  double gamma = 1;          // optimality-gap threshold
  size_t profile_points = 41;
  size_t profile_reps = 2000;
  size_t min_bootstrap_seeds = 10;  // below this, a bootstrap over seeds makes no significance claim
  bool compare = true;       // false: aggregates only (`rldk evals aggregate`)
};

struct ArmSummary {
  std::string arm;
  size_t tasks = 0, runs_min = 0, runs_max = 0;  // runs (seeds) per task
  Interval mean, median, iqm, optimality_gap;
  Profile profile;
};

// Aggregates are taken over the tasks of one direction only.
struct DirectionSummary {
  Direction direction = Direction::higher;
  std::vector<std::string> tasks;
  std::vector<ArmSummary> arms;
  Interval probability_of_improvement;  // P(B better than A), runs of each task compared
  std::vector<std::string> notes;
};

struct TaskComparison {
  std::string task;
  Direction direction = Direction::higher;
  std::string design;  // "paired" | "seeds" | "two-level" | "unpaired-items"
  size_t seeds_a = 0, seeds_b = 0, items = 0;  // items: paired (shared) items, or items per arm when unpaired
  double mean_a = NA, mean_b = NA;
  double improvement = NA;          // in the task's direction: mean_b - mean_a, negated when lower is better
  double ci_low = NA, ci_high = NA; // of the improvement
  std::string interval;             // how the interval was made
  double p_value = NA, p_holm = NA; // two-sided, and Holm-adjusted across the compared tasks
  double gate_p = NA, gate_p_holm = NA;  // one-sided: is B worse than A by more than the margin?
  std::optional<WelchTest> welch;
  std::optional<EffectSize> hedges_g;
  std::optional<MannWhitney> mann_whitney;
  std::optional<PairedTest> paired;
  double effect_for_power = NA, power = NA;
  size_t needed = 0;                // seeds per arm (seeds, two-level) or items (paired) for that power; 0 unknown
  std::string verdict;              // "better" | "worse" | "no detectable difference" | "inconclusive"
  std::vector<std::string> warnings;
};

struct EvalsReport {
  std::string a, b;
  std::vector<std::string> arms, sources;
  EvalsOptions options;
  std::vector<DirectionSummary> summaries;
  std::vector<TaskComparison> tasks;
  bool gate_failed = false;
  std::vector<std::string> gate_reasons;  // which task, by how much
  std::string verdict;  // "better" | "worse" | "mixed" | "no detectable difference" | "inconclusive" | "aggregate"
  std::string summary;
  std::vector<std::string> warnings;
};

// Errors: fewer than two arms when comparing, an unknown arm name, no task both arms have.
Result<EvalsReport> evaluate(const EvalData& data, const EvalsOptions& options);
Json evals_json(const EvalsReport& report);
std::string evals_markdown(const EvalsReport& report);
std::string evals_html(const EvalsReport& report);

}  // namespace rldk::evals
