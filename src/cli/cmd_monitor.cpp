// rldk monitor: watch a training run live (or once, offline) with guard rules; warn, call webhooks, stop it.
#include <cstdio>
#include <cstdlib>

#include "commands.h"
#include "rldk/monitor_session.h"

namespace rldk::cli {
namespace {

struct MonitorCliOptions {
  MonitorOptions monitor;
  std::vector<std::string> presets;
  std::vector<std::string> rule_files;
  std::vector<std::string> overrides;
  std::vector<std::string> webhooks;
  std::string input_format = "auto";
  bool quiet = false;
};

int run(MonitorCliOptions& cli) {
  MonitorOptions& opts = cli.monitor;
  RuleSet rules;
  if (cli.presets.empty() && cli.rule_files.empty()) {
    cli.presets.push_back("grpo_safe");
    std::fprintf(stderr, "rldk monitor: no --preset or --rules given; using the grpo_safe preset\n");
  }
  for (const auto& name : cli.presets) {
    auto preset = load_preset(name);
    if (!preset.ok()) {
      std::fprintf(stderr, "rldk monitor: %s\n", to_string(preset.error()).c_str());
      return EXIT_INPUT_ERROR;
    }
    if (Status s = merge_rule_sets(rules, std::move(preset).value()); !s.ok()) {
      std::fprintf(stderr, "rldk monitor: %s\n", to_string(s.error()).c_str());
      return EXIT_INPUT_ERROR;
    }
  }
  for (const auto& file : cli.rule_files) {
    auto loaded = load_rules_file(file);
    if (!loaded.ok()) {
      std::fprintf(stderr, "rldk monitor: %s\n", to_string(loaded.error()).c_str());
      return EXIT_INPUT_ERROR;
    }
    for (const auto& w : loaded->warnings) std::fprintf(stderr, "rldk monitor: warning: %s\n", w.c_str());
    if (Status s = merge_rule_sets(rules, std::move(loaded).value()); !s.ok()) {
      std::fprintf(stderr, "rldk monitor: %s\n", to_string(s.error()).c_str());
      return EXIT_INPUT_ERROR;
    }
  }
  for (const auto& o : cli.overrides) {
    if (Status s = apply_override(rules, o); !s.ok()) {
      std::fprintf(stderr, "rldk monitor: %s\n", to_string(s.error()).c_str());
      return EXIT_INPUT_ERROR;
    }
  }
  for (const auto& url : cli.webhooks) {
    for (auto& r : rules.rules) r.actions.push_back(RuleAction{"http", {{"url", url}}, {}});
  }
  if (opts.sources.empty() && opts.command.empty() && opts.rollouts.empty()) {
    const char* env = std::getenv("RLDK_METRICS_PATH");
    if (env == nullptr || *env == '\0') {
      std::fprintf(stderr, "rldk monitor: nothing to watch: give a metrics file or folder, - for stdin, --cmd "
                           "\"python train.py ...\", --rollouts DIR, or set RLDK_METRICS_PATH\n");
      return EXIT_INPUT_ERROR;
    }
    opts.sources.push_back(env);
  }
  if (opts.once && !opts.command.empty()) {
    std::fprintf(stderr, "rldk monitor: --once reads finished logs; it cannot be combined with --cmd\n");
    return EXIT_INPUT_ERROR;
  }
  parse_format_name(cli.input_format, opts.read.format);
  if (cli.quiet) opts.actions.console = nullptr;
  std::fprintf(stderr, "rldk monitor: %zu rules; writing alerts and report to %s/\n", rules.rules.size(),
               opts.out_dir.c_str());
  MonitorResult result = run_monitor(std::move(rules), opts);
  if (!result.error.empty()) std::fprintf(stderr, "rldk monitor: %s\n", result.error.c_str());
  return result.exit_code;
}

}  // namespace

void add_monitor_command(CLI::App& app, int& exit_code) {
  auto cli = std::make_shared<MonitorCliOptions>();
  MonitorOptions& o = cli->monitor;
  CLI::App* cmd = app.add_subcommand(
      "monitor",
      "Watch a training run with guard rules: follow its metrics file, folder or stdin, or launch the trainer with "
      "--cmd; warn, call webhooks, or stop the trainer when a guard trips.\n"
      "Exit codes: 0 ok; 1 an alert at or above --fail-on fired (e.g. the trainer was stopped); 2 usage or input "
      "error; 3 the trainer exited with an error on its own.");
  cmd->add_option("sources", o.sources,
                  "Metrics to follow: files (may not exist yet), folders (newest run file), or - for stdin");
  cmd->add_option("--rollouts", o.rollouts,
                  "Folder of per-step sample files to follow (TRL's completions/ or the trainer's output folder, "
                  "verl's rollout_data_dir): each new step gives rollout/sampled_reward_mean, rollout/length_reward_corr, "
                  "rollout/saturation_share and rollout/zero_variance_share for rules (run id \"rollouts\"); repeatable")
      ->allow_extra_args(false);
  cmd->add_flag("--once", o.once, "Read the sources to their end, report and exit (for finished runs and CI)");
  cmd->add_option("--cmd", o.command, "Launch this trainer, read its output and RLDK_METRICS_PATH, stop it on a stop action");
  cmd->add_option("--pid", o.pid, "Stop this running trainer on a stop action (a positive pid of a running process; "
                                  "checked to be the same process)");
  cmd->add_option("--preset", cli->presets, "Built-in rule preset (see `rldk rules list`); repeatable")->allow_extra_args(false);
  cmd->add_option("--rules", cli->rule_files, "Rule file (YAML); repeatable")->allow_extra_args(false);
  cmd->add_option("--set-rule", cli->overrides, "Override a rule field: ID.FIELD=VALUE (e.g. grpo_safe_kl_spike.condition=\"value > 0.5\")")->allow_extra_args(false);
  cmd->add_option("--webhook", cli->webhooks, "POST every alert to this URL (Slack-compatible JSON); repeatable")->allow_extra_args(false);
  cmd->add_option("--out", o.out_dir, "Folder for alerts.jsonl, alerts.txt and report.json")->capture_default_str();
  cmd->add_option("--fail-on", o.fail_on, "Exit 1 when an alert at this level fired")
      ->check(CLI::IsMember({"never", "warn", "stop"}))
      ->capture_default_str();
  cmd->add_option("--metrics-path", o.metrics_path, "With --cmd: file the trainer writes metrics to (exported as RLDK_METRICS_PATH; default OUT/metrics.jsonl)");
  cmd->add_option("--stop-grace", o.stop_grace_seconds, "Seconds between SIGTERM and SIGKILL when stopping")->capture_default_str();
  cmd->add_option("--idle-exit", o.idle_exit_seconds, "Without --cmd: exit after this many seconds without new data (0: never)");
  cmd->add_option("--action-deadline", o.actions.deadline_seconds,
                  "Seconds webhooks and shell actions still get at exit; then requests in flight are cut and waiting "
                  "ones abandoned (counted in report.json summary.undelivered). Actions never delay evaluation")
      ->capture_default_str();
  cmd->add_flag("--allow-shell", o.actions.allow_shell, "Allow shell actions in rule files to run");
  cmd->add_flag("!--no-passthrough", o.passthrough, "With --cmd: do not copy the trainer's output to the console");
  cmd->add_flag("!--no-console-metrics", o.read_command_output, "With --cmd: do not parse metrics from the trainer's output");
  cmd->add_flag("--timestamps", o.actions.timestamps, "Add wall-clock times to alert records");
  cmd->add_flag("-q,--quiet", cli->quiet, "Do not print alerts (they are still written to OUT)");
  cmd->add_option("--run-id", o.read.run_id, "Run id for points that carry none");
  cmd->add_option("--input-format", cli->input_format, "Read sources as this format instead of detecting it")
      ->check(CLI::IsMember({"auto", "jsonl", "json", "csv", "tsv", "console"}));
  cmd->callback([cli, &exit_code] { exit_code = run(*cli); });
}

}  // namespace rldk::cli
