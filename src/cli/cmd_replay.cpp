// rldk replay RUN --command "python train.py --seed {seed}": re-run a recorded run with its seed and check it
// reproduces.

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "commands.h"
#include "rldk/script_path.h"
#include "report_output.h"
#include "replica_work_root.h"
#include "rldk/compare.h"
#include "rldk/metric_dictionary.h"
#include "rldk/replay.h"

namespace rldk::cli {
namespace {

struct ReplayCliOptions {
  std::string run;
  std::string run_id;
  std::string command;
  std::optional<int64_t> seed;
  std::vector<std::string> compare;
  double rtol = 1e-5;
  double atol = 1e-8;
  bool bitwise = false;
  double timeout_seconds = 3600;
  int threads = 1;
  std::string work_dir;
  std::string out_dir;
  bool json = false;
  bool gate = false;
};

int run_replay(const ReplayCliOptions& opts) {
  const char* me = "rldk replay";
  auto original = read_one_run(opts.run, opts.run_id);
  if (!original.ok()) {
    std::fprintf(stderr, "%s: %s\n", me, to_string(original.error()).c_str());
    return EXIT_INPUT_ERROR;
  }
  ReplayReport report;
  report.original_path = opts.run;
  if (opts.seed) {
    report.seed = {*opts.seed, "flag"};
  } else {
    auto seed = find_run_seed(original.value());
    if (!seed.ok()) {
      std::fprintf(stderr, "%s: %s\n", me, to_string(seed.error()).c_str());
      return EXIT_INPUT_ERROR;
    }
    report.seed = seed.value();
  }
  auto command = substitute_seed(opts.command, report.seed.seed);
  if (!command.ok()) {
    std::fprintf(stderr, "%s: --command: %s\n", me, command.error().message.c_str());
    return EXIT_INPUT_ERROR;
  }
  report.command = with_absolute_script(command.value(), std::filesystem::current_path().string());

  ReplicaRunOptions run;
  run.command = report.command;
  run.replicas = 1;
  run.timeout = std::chrono::milliseconds(static_cast<int64_t>(opts.timeout_seconds * 1000));
  run.environment = determinism_environment(report.seed.seed, opts.threads);
  run.environment.emplace_back("RLDK_SEED", std::to_string(report.seed.seed));
  auto work_root = replica_work_root(opts.work_dir, opts.out_dir, "replay", "rldk-replay");
  if (!work_root) {
    std::fprintf(stderr, "%s: cannot create a temporary folder for the replay\n", me);
    return EXIT_INPUT_ERROR;
  }
  run.work_root = *work_root;
  auto outcomes = run_replicas(run);
  if (!outcomes.ok()) {
    std::fprintf(stderr, "%s: %s\n", me, to_string(outcomes.error()).c_str());
    return EXIT_INPUT_ERROR;
  }
  report.outcome = outcomes->front();
  report.compare.bitwise = opts.bitwise;
  report.compare.rtol = opts.bitwise ? 0.0 : opts.rtol;
  report.compare.atol = opts.bitwise ? 0.0 : opts.atol;
  report.compare.common_steps_only = true;

  if (!report.outcome.succeeded()) {
    report.errors.push_back("the replay " + report.outcome.describe() + " (stderr: " + report.outcome.stderr_path + ")");
  } else if (auto replayed = load_replica_metrics(report.outcome); !replayed.ok()) {
    report.errors.push_back(replayed.error().message);
  } else {
    for (const auto& m : opts.compare) report.compare.metrics.push_back(MetricDictionary::builtin().canonical_name(m));
    if (report.compare.metrics.empty()) {
      for (const auto& n : diff_default_signals()) {
        if (original->find(n) && replayed->find(n)) report.compare.metrics.push_back(n);
      }
      if (report.compare.metrics.empty()) {
        for (const auto& [n, s] : original->series) {
          if (n != "seed" && replayed->find(n)) report.compare.metrics.push_back(n);
        }
      }
    }
    for (const auto& name : report.compare.metrics) {
      const Series* a = original->find(name);
      const Series* b = replayed->find(name);
      if (!a || !b) continue;
      AlignedPair p = align(step_values(*a), step_values(*b));
      report.steps_only_original += p.only_a;
      report.steps_only_replay += p.only_b;
    }
    report.comparison = compare_replicas({original.value(), replayed.value()}, report.compare);
  }

  Json json = replay_json(report);
  if (opts.json) {
    print_text(stdout, json.dump());
  } else {
    print_text(stdout, replay_text(report));
  }
  if (!opts.out_dir.empty()) {
    if (!write_report_folder(me, opts.out_dir, {opts.run},
                             {{"replay.json", json.dump()}, {"replay.md", replay_markdown(report)}})) {
      return EXIT_INPUT_ERROR;
    }
  }
  std::string verdict = report.verdict();
  if (verdict == "error") return EXIT_INPUT_ERROR;
  return opts.gate && verdict == "fail" ? EXIT_FINDINGS : EXIT_OK;
}

}  // namespace

void add_replay_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<ReplayCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "replay", "Re-run a recorded run's training command with the run's seed and check that it reproduces the "
                "logged metrics step by step, within a tolerance.");
  cmd->add_option("run", opts->run, "The recorded run: a log file or a folder holding one run")->required();
  cmd->add_option("--command", opts->command,
                  "Training command with a {seed} placeholder, e.g. \"python train.py --seed {seed}\"; it should log "
                  "to $RLDK_METRICS_PATH (or print metrics)")
      ->required();
  cmd->add_option("--seed", opts->seed, "Seed to use (default: the run's metadata `seed`, or its logged `seed` value)");
  cmd->add_option("--run-id", opts->run_id, "Run id to take when the source holds several runs");
  cmd->add_option("--compare,--metrics", opts->compare,
                  "Metrics to compare, comma-separated (default: the important canonical metrics both logged)")
      ->delimiter(',');
  cmd->add_option("--rtol", opts->rtol, "Relative tolerance")->capture_default_str()->check(FiniteNonNegative());
  cmd->add_option("--atol", opts->atol, "Absolute tolerance")->capture_default_str()->check(FiniteNonNegative());
  cmd->add_flag("--bitwise", opts->bitwise, "Require bit-identical values instead of a tolerance");
  cmd->add_option("--timeout", opts->timeout_seconds, "Seconds the replay may run")->capture_default_str()->check(
      FinitePositive());
  cmd->add_option("--threads", opts->threads, "OMP/MKL/OpenBLAS thread count for the replay")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--work-dir", opts->work_dir, "Folder for the replay's working folder (default: OUT/replay or a "
                                                "new temporary folder)");
  cmd->add_option("--out", opts->out_dir, "Write replay.json and replay.md here");
  cmd->add_flag("--json", opts->json, "Print the rldk.replay/v1 JSON report instead of text");
  cmd->add_flag("--gate", opts->gate, "Exit 0 reproduced, 1 not reproduced, 2 error (for CI)");
  cmd->callback([opts, &exit_code] { exit_code = run_replay(*opts); });
}

}  // namespace rldk::cli
