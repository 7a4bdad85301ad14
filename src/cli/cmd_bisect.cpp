// rldk bisect --good G --bad B --cmd "..." --metric M --cmp "> 0.87": the commit that made a metric regress.
// The same subcommand, with the hidden --predicate flag, is what `git bisect run` calls at each commit.
#include <cstdio>
#include <memory>

#include "commands.h"
#include "report_output.h"
#include "rldk/bisect.h"

namespace rldk::cli {
namespace {

struct BisectCliOptions {
  std::string repo = ".";
  std::string good;
  std::string bad;
  std::string command;
  std::string metric;
  std::string cmp;
  size_t window = 100;
  int64_t timeout_s = 3600;
  std::string metrics_path;
  std::string log_path = "rldk_bisect.log";
  bool json = false;
  bool predicate = false;
};

int run_bisect_command(const BisectCliOptions& opts) {
  // Checked here rather than by the parser: the older tool's `rldk bisect --good G --bad B --cmd C` had no metric,
  // and deserves to hear why one is needed.
  if (opts.metric.empty() || opts.cmp.empty()) {
    std::fputs("rldk bisect: --metric and --cmp are required: each commit is judged by a metric the command logs "
               "(e.g. --metric reward_mean --cmp \"> 0.87\"); to judge by the command's exit status alone, use "
               "`git bisect run CMD`\n",
               stderr);
    return opts.predicate ? BISECT_ABORT : EXIT_INPUT_ERROR;
  }
  auto comparison = parse_comparison(opts.cmp);
  if (!comparison.ok()) {
    std::fprintf(stderr, "rldk bisect: --cmp %s\n", to_string(comparison.error()).c_str());
    return opts.predicate ? BISECT_ABORT : EXIT_INPUT_ERROR;
  }
  PredicateOptions predicate;
  predicate.command = opts.command;
  predicate.metric = opts.metric;
  predicate.comparison = comparison.value();
  predicate.window = opts.window;
  predicate.timeout = std::chrono::seconds(opts.timeout_s);
  predicate.metrics_path = opts.metrics_path;
  if (opts.predicate) {
    predicate.log_path = opts.log_path;
    PredicateOutcome outcome = evaluate_bisect_predicate(predicate);
    std::fprintf(stderr, "rldk bisect: %s: %s\n", std::string(verdict_name(outcome.verdict)).c_str(),
                 outcome.reason.c_str());
    return outcome.exit_code();
  }
  if (opts.good.empty() || opts.bad.empty()) {
    std::fputs("rldk bisect: --good and --bad are required (a revision where the metric is fine, and a later one "
               "where it has regressed)\n",
               stderr);
    return EXIT_INPUT_ERROR;
  }
  BisectOptions options;
  options.repo_dir = opts.repo;
  options.good = opts.good;
  options.bad = opts.bad;
  options.predicate = predicate;
  options.log_path = opts.log_path;
  auto result = run_bisect(options);
  if (!result.ok()) {
    std::fprintf(stderr, "rldk bisect: %s\n", to_string(result.error()).c_str());
    return EXIT_INPUT_ERROR;
  }
  if (opts.json) {
    print_text(stdout, bisect_result_json(result.value(), options).dump());
  } else if (result->found) {
    std::printf("first bad commit: %s %s\n", result->first_bad_commit.c_str(), result->subject.c_str());
    std::printf("commits tested: %zu; log: %s\n", result->commits_tested, result->log_path.c_str());
  } else {
    std::printf("no first bad commit: %s\n", result->message.c_str());
    for (const auto& c : result->candidates) std::printf("  candidate %s\n", c.c_str());
    std::printf("log: %s\n", result->log_path.c_str());
  }
  return result->found ? EXIT_OK : EXIT_FINDINGS;
}

}  // namespace

void add_bisect_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<BisectCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bisect",
      "Find the commit that made a training metric regress: runs your command at each commit `git bisect` picks, "
      "reads the metric from $RLDK_METRICS_PATH (or the command's console output), averages its last --window "
      "points and compares with --cmp. A commit whose command fails is skipped. The repository is always reset. "
      "Exit 0 when a first bad commit is named, 1 when none could be, 2 on bad input.");
  cmd->add_option("--repo", opts->repo, "Git repository (default: the current directory)");
  cmd->add_option("--good", opts->good, "A revision where the metric is fine");
  cmd->add_option("--bad", opts->bad, "A later revision where it has regressed");
  cmd->add_option("--cmd", opts->command, "Command that trains/evaluates and logs the metric (run with /bin/sh)")
      ->required();
  cmd->add_option("--metric", opts->metric, "Metric name, canonical (e.g. reward/mean) or as logged (required)");
  cmd->add_option("--cmp", opts->cmp, "What a good value satisfies: an operator and a number, e.g. \"> 0.87\" (required)");
  cmd->add_option("--window", opts->window, "Average the metric's last N points (default 100)")
      ->check(FinitePositive());
  cmd->add_option("--timeout", opts->timeout_s, "Seconds one run of the command may take; longer counts as skipped")
      ->check(FinitePositive());
  cmd->add_option("--metrics-path", opts->metrics_path,
                  "Fixed RLDK_METRICS_PATH for the command (default: a fresh temporary file per commit)");
  cmd->add_option("--log", opts->log_path, "Log of every commit tested and git's output (default rldk_bisect.log)");
  cmd->add_flag("--json", opts->json, "Print the rldk.bisect/v1 JSON result");
  // Internal: the predicate `git bisect run` calls. Exit 0 good, 1 bad, 125 skip, 128 abort.
  cmd->add_flag("--predicate", opts->predicate)->group("");
  cmd->callback([opts, &exit_code] { exit_code = run_bisect_command(*opts); });
}

}  // namespace rldk::cli
