// rldk check-determinism --cmd "...": run a training command as N replicas and check they log the same numbers.
#include <unistd.h>  // environ

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <thread>

#include "commands.h"
#include "report_output.h"
#include "replica_work_root.h"
#include "rldk/compare.h"
#include "rldk/determinism.h"
#include "rldk/env_audit.h"
#include "rldk/metric_dictionary.h"
#include "rldk/script_path.h"

namespace rldk::cli {
namespace {

struct CheckCliOptions {
  std::string command;
  size_t replicas = 2;
  size_t parallel = 0;
  std::vector<std::string> compare;
  std::vector<std::string> steps;
  std::optional<double> rtol, atol;
  bool bitwise = false;
  double timeout_seconds = 600;
  int threads = 1;
  std::optional<int64_t> seed;
  std::string work_dir;
  std::string out_dir;
  bool json = false;
  bool gate = false;
  bool env_audit = true;
  std::string repo;
};

// "5", "10-20" (inclusive) or "0:100:10" (start:stop:stride, stop inclusive).
bool parse_steps(const std::vector<std::string>& items, std::vector<int64_t>& out, std::string& bad) {
  for (const auto& item : items) {
    try {
      size_t dash = item.find('-', 1);
      size_t colon = item.find(':');
      if (colon != std::string::npos) {
        size_t colon2 = item.find(':', colon + 1);
        int64_t start = std::stoll(item.substr(0, colon));
        int64_t stop = std::stoll(item.substr(colon + 1, colon2 == std::string::npos ? std::string::npos : colon2 - colon - 1));
        int64_t stride = colon2 == std::string::npos ? 1 : std::stoll(item.substr(colon2 + 1));
        if (stride <= 0 || stop < start) throw std::invalid_argument(item);
        for (int64_t s = start; s <= stop; s += stride) out.push_back(s);
      } else if (dash != std::string::npos) {
        int64_t start = std::stoll(item.substr(0, dash)), stop = std::stoll(item.substr(dash + 1));
        if (stop < start) throw std::invalid_argument(item);
        for (int64_t s = start; s <= stop; ++s) out.push_back(s);
      } else {
        size_t used = 0;
        out.push_back(std::stoll(item, &used));
        if (used != item.size()) throw std::invalid_argument(item);
      }
    } catch (const std::exception&) {
      bad = item;
      return false;
    }
  }
  return true;
}

int run_check(const CheckCliOptions& opts) {
  const char* me = "rldk check-determinism";
  DeterminismReport report;
  report.command = opts.command;
  report.replicas = opts.replicas;
  report.timeout_seconds = opts.timeout_seconds;
  std::string bad;
  if (!parse_steps(opts.steps, report.compare.steps, bad)) {
    std::fprintf(stderr, "%s: --steps: '%s' is not a step, a range A-B or A:B:STRIDE\n", me, bad.c_str());
    return EXIT_INPUT_ERROR;
  }
  report.compare.bitwise = opts.bitwise || (!opts.rtol && !opts.atol);
  if (!report.compare.bitwise) {
    report.compare.rtol = opts.rtol.value_or(0.0);
    report.compare.atol = opts.atol.value_or(0.0);
  }
  for (const auto& m : opts.compare) report.compare.metrics.push_back(MetricDictionary::builtin().canonical_name(m));

  ReplicaRunOptions run;
  run.command = with_absolute_script(opts.command, std::filesystem::current_path().string());
  run.replicas = opts.replicas;
  run.parallel = opts.parallel != 0 ? opts.parallel : std::max(1u, std::thread::hardware_concurrency());
  run.parallel = std::min(run.parallel, run.replicas);
  report.parallel = run.parallel;
  run.timeout = std::chrono::milliseconds(static_cast<int64_t>(opts.timeout_seconds * 1000));
  run.environment = determinism_environment(opts.seed, opts.threads);
  report.environment = run.environment;
  auto work_root = replica_work_root(opts.work_dir, opts.out_dir, "replicas", "rldk-determinism");
  if (!work_root) {
    std::fprintf(stderr, "%s: cannot create a temporary folder for the replicas\n", me);
    return EXIT_INPUT_ERROR;
  }
  run.work_root = *work_root;

  auto outcomes = run_replicas(run);
  if (!outcomes.ok()) {
    std::fprintf(stderr, "%s: %s\n", me, to_string(outcomes.error()).c_str());
    return EXIT_INPUT_ERROR;
  }
  report.outcomes = std::move(outcomes.value());

  std::vector<Run> runs;
  for (const auto& o : report.outcomes) {
    if (!o.succeeded()) {
      report.replica_errors.push_back("replica " + std::to_string(o.index) + " " + o.describe() + " (stderr: " +
                                      o.stderr_path + ")");
      continue;
    }
    auto metrics = load_replica_metrics(o);
    if (!metrics.ok()) {
      report.replica_errors.push_back(metrics.error().message + " (" + o.work_dir + ")");
      continue;
    }
    runs.push_back(std::move(metrics.value()));
  }
  int64_t first_logged_step = 0;
  if (report.replica_errors.empty() && !runs.empty()) {
    if (report.compare.metrics.empty()) report.compare.metrics = default_replica_metrics(runs);
    first_logged_step = runs.front().first_step();
    report.comparison = compare_replicas(runs, report.compare);
  }
  report.hints = culprit_hints(report.outcomes, report.comparison, first_logged_step);
  if (opts.env_audit) {
    EnvAuditOptions audit_options;
    audit_options.repo_dir = opts.repo;
    audit_options.include_packages = false;
    // Audit what the replicas ran with: this process's environment plus the determinism variables.
    std::map<std::string, std::string> env;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
      std::string entry(*e);
      size_t eq = entry.find('=');
      if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
    }
    for (const auto& [k, v] : report.environment) env[k] = v;
    audit_options.environment = env;
    auto audit = run_env_audit(audit_options);
    if (audit.ok()) {
      report.env_audit = std::move(audit.value());
    } else {
      std::fprintf(stderr, "%s: environment audit skipped: %s\n", me, to_string(audit.error()).c_str());
    }
  }

  Json json = determinism_json(report);
  if (opts.json) {
    print_text(stdout, json.dump());
  } else {
    print_text(stdout, determinism_text(report));
  }
  if (!opts.out_dir.empty()) {
    std::filesystem::path dir(opts.out_dir);
    if (!write_report_folder(me, opts.out_dir, {},
                             {{"determinism.json", json.dump()},
                              {"determinism.md", determinism_markdown(report)},
                              {"determinism.html", determinism_html(report)}})) {
      return EXIT_INPUT_ERROR;
    }
    if (!opts.json) std::printf("\ndeterminism card: %s\n", (dir / "determinism.html").string().c_str());
  }
  std::string verdict = report.verdict();
  if (verdict == "error") return EXIT_INPUT_ERROR;
  return opts.gate && verdict == "fail" ? EXIT_FINDINGS : EXIT_OK;
}

}  // namespace

void add_check_determinism_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<CheckCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "check-determinism",
      "Run a training command as N replicas (in parallel, each in its own folder with its own RLDK_METRICS_PATH and "
      "the determinism environment) and compare what they log per step, bitwise or within tolerances. A replica "
      "that crashes, times out or logs nothing is an error, never a pass.");
  cmd->add_option("--cmd", opts->command, "The training command, run by /bin/sh in each replica's folder")
      ->required();
  cmd->add_option("--replicas", opts->replicas, "How many times to run it")->capture_default_str()->check(
      CLI::Range(2, 1024));
  cmd->add_option("--parallel", opts->parallel, "Replicas running at once (default: the number of cores)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--compare", opts->compare,
                  "Metrics to compare, comma-separated (canonical or raw names; default: the important canonical "
                  "metrics all replicas logged)")
      ->delimiter(',');
  cmd->add_option("--steps", opts->steps, "Only these steps: N, A-B or A:B:STRIDE, comma-separated")->delimiter(',');
  cmd->add_option("--rtol", opts->rtol, "Relative tolerance: |x - ref| <= atol + rtol * |ref| (default: bitwise)")
      ->check(FiniteNonNegative());
  cmd->add_option("--atol", opts->atol, "Absolute tolerance (default: bitwise)")->check(FiniteNonNegative());
  cmd->add_flag("--bitwise", opts->bitwise, "Compare float64 bit patterns (the default unless --rtol/--atol)");
  cmd->add_option("--timeout", opts->timeout_seconds, "Seconds each replica may run before it is stopped (an error)")
      ->capture_default_str()
      ->check(FinitePositive());
  cmd->add_option("--threads", opts->threads, "OMP/MKL/OpenBLAS thread count given to each replica")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--seed", opts->seed, "PYTHONHASHSEED for the replicas (default 0)");
  cmd->add_option("--work-dir", opts->work_dir,
                  "Folder for the replicas' working folders; must not hold an earlier check (default: OUT/replicas, replaced on "
                  "each run, else a new temporary folder)");
  cmd->add_option("--out,--output-dir", opts->out_dir, "Write the determinism card here: determinism.json, .md, .html");
  cmd->add_flag("--json", opts->json, "Print the rldk.determinism/v1 JSON report instead of text");
  cmd->add_flag("--gate", opts->gate, "Exit 0 pass, 1 fail, 2 error (for CI)");
  cmd->add_flag("!--no-env-audit", opts->env_audit, "Skip the environment audit (Python probe, variables)");
  cmd->add_option("--repo", opts->repo, "Also scan this repository's Python code for seeding and determinism flags");
  cmd->callback([opts, &exit_code] { exit_code = run_check(*opts); });
}

}  // namespace rldk::cli
