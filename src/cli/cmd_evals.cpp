// rldk evals compare|aggregate SOURCES...: is B really better than A, and how sure are we? Reads eval results (a
// results table, per-item outputs, or eval/* metrics of run logs), prints the eval card, writes it with --out.
#include <cstdio>
#include <filesystem>
#include <memory>

#include "commands.h"
#include "report_output.h"
#include "rldk/evals.h"

namespace rldk::cli {
namespace {

struct EvalsCliOptions {
  std::vector<std::string> sources;
  evals::EvalColumns columns;
  std::string a, b;
  std::vector<std::string> lower;
  bool runs = false;
  std::string at = "last";
  double confidence = 0.95;
  size_t reps = 10000;
  std::string method = "percentile";
  uint64_t seed = 0;
  double margin = 0;
  double effect = evals::NA;
  double power = 0.8;
  double gamma = 1;
  bool task_bootstrap = false;
  bool json = false;
  bool gate = false;
  std::string out;
};

int run_evals(const EvalsCliOptions& opts, bool compare) {
  const char* me = compare ? "rldk evals compare" : "rldk evals aggregate";
  evals::EvalData data;
  Diagnostics diagnostics;
  for (const auto& source : opts.sources) {
    Status status = Ok{};
    if (opts.runs) {
      evals::RunEvalOptions ro;
      if (opts.at == "last") {
        ro.at = evals::EvalAt::last;
      } else if (opts.at == "best") {
        ro.at = evals::EvalAt::best;
      } else {
        char* end = nullptr;
        long long step = std::strtoll(opts.at.c_str(), &end, 10);
        if (opts.at.empty() || *end != '\0') {
          std::fprintf(stderr, "%s: --at takes last, best or a step number, got '%s'\n", me, opts.at.c_str());
          return EXIT_INPUT_ERROR;
        }
        ro.at = evals::EvalAt::step;
        ro.step = step;
      }
      ro.lower_is_better = opts.lower;
      status = evals::read_run_evals(source, ro, data, diagnostics);
    } else {
      evals::EvalReadOptions ro;
      ro.columns = opts.columns;
      status = evals::read_eval_results(source, ro, data, diagnostics);
    }
    if (!status.ok()) {
      std::fprintf(stderr, "%s: %s\n", me, to_string(status.error()).c_str());
      return EXIT_INPUT_ERROR;
    }
  }
  for (const auto& d : diagnostics.examples()) std::fprintf(stderr, "%s: warning: %s\n", me, to_string(d).c_str());
  evals::EvalsOptions options;
  options.compare = compare;
  options.a = opts.a;
  options.b = opts.b;
  options.lower_is_better = opts.lower;
  options.bootstrap.confidence = opts.confidence;
  options.bootstrap.reps = opts.reps;
  options.bootstrap.method = opts.method == "bca" ? evals::IntervalMethod::bca : evals::IntervalMethod::percentile;
  options.bootstrap.seed = opts.seed;
  options.bootstrap.task_bootstrap = opts.task_bootstrap;
  options.margin = opts.margin;
  options.effect = opts.effect;
  options.power = opts.power;
  options.gamma = opts.gamma;
  auto report = evals::evaluate(data, options);
  if (!report.ok()) {
    std::fprintf(stderr, "%s: %s\n", me, to_string(report.error()).c_str());
    return EXIT_INPUT_ERROR;
  }
  Json json = evals::evals_json(report.value());
  std::string markdown = evals::evals_markdown(report.value());
  if (!opts.out.empty() &&
      !write_report_folder(me, opts.out, opts.sources,
                           {{"evals.json", json.dump()},
                            {"evals.md", markdown},
                            {"evals.html", evals::evals_html(report.value())}})) {
    return EXIT_INPUT_ERROR;
  }
  print_text(stdout, opts.json ? json.dump() : markdown);
  if (opts.gate && report->gate_failed) {
    for (const auto& reason : report->gate_reasons) std::fprintf(stderr, "%s: gate: %s\n", me, reason.c_str());
    return EXIT_FINDINGS;
  }
  return EXIT_OK;
}

void add_common_options(CLI::App* cmd, const std::shared_ptr<EvalsCliOptions>& o, bool compare) {
  cmd->add_option("sources", o->sources,
                  "Eval results: results tables (arm/algorithm, seed, task, score) or per-item outputs (item id, "
                  "task, score or correct) as CSV, JSONL or Parquet, or folders of them; each file without an arm "
                  "column is one arm named after the file. With --runs: run logs whose eval/* metrics are the scores")
      ->required();
  cmd->add_option("--score-col", o->columns.score,
                  "Score column (default: score, correct, accuracy, pass, value, ...)");
  cmd->add_option("--task-col", o->columns.task, "Task column (default: task, env, benchmark, dataset, ...)");
  cmd->add_option("--item-col", o->columns.item, "Item id column (default: item, item_id, id, example_id, ...)");
  cmd->add_option("--seed-col", o->columns.seed, "Seed column (default: seed, run_id, replicate, trial)");
  cmd->add_option("--arm-col", o->columns.arm, "Arm column (default: algorithm, arm, checkpoint, model, run, ...)");
  cmd->add_flag("--runs", o->runs, "Sources are run logs: each run is a seed, each eval/* metric a task");
  cmd->add_option("--at", o->at, "With --runs: the evaluation to use: last, best or a step (the last at or before it)")
      ->capture_default_str();
  cmd->add_option("--lower-is-better", o->lower, "A task whose lower scores are better; repeatable")
      ->allow_extra_args(false);
  cmd->add_option("--confidence", o->confidence, "Confidence of every interval and test")
      ->capture_default_str()
      ->check(CLI::Range(0.5, 0.999999));
  cmd->add_option("--reps", o->reps, "Bootstrap resamples")->capture_default_str()->check(CLI::Range(100, 10000000));
  cmd->add_option("--method", o->method, "Bootstrap interval: percentile or bca")
      ->capture_default_str()
      ->check(CLI::IsMember({"percentile", "bca"}));
  cmd->add_option("--seed", o->seed, "Seed of every bootstrap (same seed, same card)")->capture_default_str();
  cmd->add_option("--gamma", o->gamma, "Optimality-gap threshold")->capture_default_str();
  cmd->add_flag("--task-bootstrap", o->task_bootstrap, "Also resample tasks in the aggregate intervals");
  if (compare) {
    cmd->add_option("--a", o->a, "Arm A (the baseline) when the sources hold more than two (default: the first read)");
    cmd->add_option("--b", o->b, "Arm B (the candidate) (default: the second read)");
    cmd->add_option("--margin", o->margin, "--gate fails when B is worse than A by more than this")
        ->capture_default_str()
        ->check(FiniteNonNegative());
    cmd->add_option("--effect", o->effect,
                    "Smallest improvement worth detecting, for the power figures (default: the margin, else the "
                    "observed difference)")
        ->check(FinitePositive());
    cmd->add_option("--power", o->power, "Wanted power of the seeds/items-needed figures")
        ->capture_default_str()
        ->check(CLI::Range(0.5, 0.9999));
    cmd->add_flag("--gate", o->gate,
                  "Exit 1 when B is worse than A by more than --margin at the stated confidence (Holm-corrected "
                  "across tasks), 0 when not");
  }
  cmd->add_flag("--json", o->json, "Print the rldk.evals/v1 JSON document instead of Markdown");
  cmd->add_option("--out", o->out, "Also write DIR/evals.json, evals.md and the eval card evals.html");
}

int run_validate(const EvalsCliOptions& opts) {
  const char* me = "rldk evals validate";
  evals::EvalData data;
  Diagnostics diagnostics;
  for (const auto& source : opts.sources) {
    evals::EvalReadOptions ro;
    ro.columns = opts.columns;
    Status status = evals::read_eval_results(source, ro, data, diagnostics);
    if (!status.ok()) {
      std::fprintf(stderr, "%s: %s\n", me, to_string(status.error()).c_str());
      return EXIT_INPUT_ERROR;
    }
  }
  for (const auto& d : diagnostics.examples()) std::fprintf(stderr, "%s: warning: %s\n", me, to_string(d).c_str());
  if (data.cells.empty()) {
    std::fprintf(stderr, "%s: no scores were read\n", me);
    return EXIT_INPUT_ERROR;
  }
  print_text(stdout, evals::eval_data_markdown(data));
  return EXIT_OK;
}

struct SuiteCliOptions {
  std::vector<std::string> sources;
  std::string suite;
  uint64_t seed = 0;
  size_t reps = 10000;
  double confidence = 0.95;
  bool json = false;
  std::string out;
  std::string output_file;  // --output FILE (the older tool's flag): the JSON document written to FILE
};

int run_suite(const SuiteCliOptions& opts) {
  const char* me = "rldk evals evaluate";
  evals::BootstrapOptions bo;
  bo.seed = opts.seed;
  bo.reps = opts.reps;
  bo.confidence = opts.confidence;
  Diagnostics diagnostics;
  auto report = evals::evaluate_suite(opts.sources, evals::builtin_suites(), opts.suite, bo, diagnostics);
  for (const auto& d : diagnostics.examples()) std::fprintf(stderr, "%s: warning: %s\n", me, to_string(d).c_str());
  if (!report.ok()) {
    std::fprintf(stderr, "%s: %s\n", me, to_string(report.error()).c_str());
    return EXIT_INPUT_ERROR;
  }
  Json json = evals::suite_json(report.value());
  std::string markdown = evals::suite_markdown(report.value());
  if (!opts.out.empty() && !write_report_folder(me, opts.out, opts.sources,
                                                {{"eval_suite.json", json.dump()}, {"eval_suite.md", markdown}})) {
    return EXIT_INPUT_ERROR;
  }
  if (!opts.output_file.empty()) {
    std::filesystem::path file(opts.output_file);
    std::string dir = file.has_parent_path() ? file.parent_path().string() : ".";
    if (!write_report_folder(me, dir, opts.sources, {{file.filename().string(), json.dump()}})) return EXIT_INPUT_ERROR;
  }
  print_text(stdout, opts.json ? json.dump() : markdown);
  return EXIT_OK;
}

struct WinRateCliOptions {
  std::vector<std::string> sources;
  evals::JudgeColumns columns;
  uint64_t seed = 0;
  size_t reps = 2000;
  double confidence = 0.95;
  bool json = false;
  std::string out;
};

int run_winrate(const WinRateCliOptions& opts) {
  const char* me = "rldk evals winrate";
  evals::BootstrapOptions bo;
  bo.seed = opts.seed;
  bo.reps = opts.reps;
  bo.confidence = opts.confidence;
  Diagnostics diagnostics;
  auto report = evals::length_controlled_report(opts.sources, opts.columns, bo, diagnostics);
  for (const auto& d : diagnostics.examples()) std::fprintf(stderr, "%s: warning: %s\n", me, to_string(d).c_str());
  if (!report.ok()) {
    std::fprintf(stderr, "%s: %s\n", me, to_string(report.error()).c_str());
    return EXIT_INPUT_ERROR;
  }
  Json json = evals::winrate_json(report.value());
  std::string markdown = evals::winrate_markdown(report.value());
  if (!opts.out.empty() && !write_report_folder(me, opts.out, opts.sources,
                                                {{"winrate.json", json.dump()}, {"winrate.md", markdown}})) {
    return EXIT_INPUT_ERROR;
  }
  print_text(stdout, opts.json ? json.dump() : markdown);
  return EXIT_OK;
}

}  // namespace

void add_evals_command(CLI::App& app, int& exit_code) {
  CLI::App* evals = app.add_subcommand(
      "evals", "Trusted evaluation: rliable's aggregates (IQM, optimality gap, probability of improvement) with "
               "stratified bootstrap intervals and performance profiles, and two-arm comparisons chosen by the "
               "design (paired items, seeds, both), Holm-corrected, with power and seeds needed.");
  evals->require_subcommand(1);
  auto compare_opts = std::make_shared<EvalsCliOptions>();
  CLI::App* compare = evals->add_subcommand(
      "compare", "Is B better than A? Per task: paired test and bootstrap over shared items, Welch/Hedges' g/"
                 "Mann-Whitney over seeds, or a two-level bootstrap when both vary; aggregates and P(B > A).");
  add_common_options(compare, compare_opts, true);
  compare->callback([compare_opts, &exit_code] { exit_code = run_evals(*compare_opts, true); });
  auto aggregate_opts = std::make_shared<EvalsCliOptions>();
  CLI::App* aggregate = evals->add_subcommand(
      "aggregate", "Mean, median, IQM and optimality gap of every arm with stratified bootstrap intervals, and "
                   "performance profiles with bands.");
  aggregate->alias("summary");
  add_common_options(aggregate, aggregate_opts, false);
  aggregate->callback([aggregate_opts, &exit_code] { exit_code = run_evals(*aggregate_opts, false); });
  auto validate_opts = std::make_shared<EvalsCliOptions>();
  CLI::App* validate = evals->add_subcommand(
      "validate", "What the readers make of eval results: arms, tasks, seeds and items per arm and task, skipped "
                  "rows, and the comparison design each task would get. Exit 2 when nothing can be read.");
  validate->alias("validate-data");  // the older tool's name
  validate->add_option("sources", validate_opts->sources, "Eval results (as for compare)")->required();
  validate->add_option("--score-col", validate_opts->columns.score, "Score column");
  validate->add_option("--task-col", validate_opts->columns.task, "Task column");
  validate->add_option("--item-col", validate_opts->columns.item, "Item id column");
  validate->add_option("--seed-col", validate_opts->columns.seed, "Seed column");
  validate->add_option("--arm-col", validate_opts->columns.arm, "Arm column");
  validate->callback([validate_opts, &exit_code] { exit_code = run_validate(*validate_opts); });
  CLI::App* suites = evals->add_subcommand(
      "suites", "List the eval suites and their probes (data/eval_suites.yaml): which column each measures and "
                "which way is better.");
  suites->alias("list-suites");  // the older tool's name
  suites->callback([&exit_code] {
    print_text(stdout, evals::suites_markdown(evals::builtin_suites()));
    exit_code = EXIT_OK;
  });
  auto suite_opts = std::make_shared<SuiteCliOptions>();
  CLI::App* evaluate = evals->add_subcommand(
      "evaluate", "The older tool's command: run a suite's probes on a per-sample or per-step table (JSONL, CSV, "
                  "Parquet); each probe is one column's mean with a bootstrap interval, a probe without its column "
                  "is skipped with the reason, and there is no overall score.");
  evaluate->add_option("data", suite_opts->sources, "Tables to read")->required();
  evaluate->add_option("--suite", suite_opts->suite, "Suite name (rldk evals suites lists them)")->required();
  evaluate->add_option("--seed", suite_opts->seed, "Seed of the bootstrap")->capture_default_str();
  evaluate->add_option("--reps", suite_opts->reps, "Bootstrap resamples")
      ->capture_default_str()
      ->check(CLI::Range(100, 10000000));
  evaluate->add_option("--confidence", suite_opts->confidence, "Confidence of the intervals")
      ->capture_default_str()
      ->check(CLI::Range(0.5, 0.999999));
  evaluate->add_flag("--json", suite_opts->json, "Print the rldk.evals-suite/v1 JSON document instead of Markdown");
  evaluate->add_option("--out", suite_opts->out, "Also write DIR/eval_suite.json and eval_suite.md");
  evaluate->add_option("--output", suite_opts->output_file, "Also write the rldk.evals-suite/v1 JSON document to this file");
  evaluate->callback([suite_opts, &exit_code] { exit_code = run_suite(*suite_opts); });
  auto win_opts = std::make_shared<WinRateCliOptions>();
  CLI::App* winrate = evals->add_subcommand(
      "winrate", "Pairwise judge results: the win rate of B over A, raw and controlled for length (the preference "
                 "at equal length, from least squares on len(B) - len(A)), per task, with bootstrap intervals.");
  winrate->add_option("judgements", win_opts->sources,
                      "Tables (JSONL, CSV, Parquet) with a preference for B (1/0/0.5, b/a/tie, or a probability) and "
                      "the lengths (length_a, length_b) or the outputs (output_a, output_b) of both sides")
      ->required();
  winrate->add_option("--preference-col", win_opts->columns.preference, "Preference column");
  winrate->add_option("--length-a-col", win_opts->columns.length_a, "Length of A's answer");
  winrate->add_option("--length-b-col", win_opts->columns.length_b, "Length of B's answer");
  winrate->add_option("--output-a-col", win_opts->columns.output_a, "A's answer (its length is counted in words)");
  winrate->add_option("--output-b-col", win_opts->columns.output_b, "B's answer");
  winrate->add_option("--task-col", win_opts->columns.task, "Task column");
  winrate->add_option("--seed", win_opts->seed, "Seed of the bootstrap")->capture_default_str();
  winrate->add_option("--reps", win_opts->reps, "Bootstrap resamples")
      ->capture_default_str()
      ->check(CLI::Range(100, 10000000));
  winrate->add_option("--confidence", win_opts->confidence, "Confidence of the intervals")
      ->capture_default_str()
      ->check(CLI::Range(0.5, 0.999999));
  winrate->add_flag("--json", win_opts->json, "Print the rldk.evals-winrate/v1 JSON document instead of Markdown");
  winrate->add_option("--out", win_opts->out, "Also write DIR/winrate.json and winrate.md");
  winrate->callback([win_opts, &exit_code] { exit_code = run_winrate(*win_opts); });
}

}  // namespace rldk::cli
