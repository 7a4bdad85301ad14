// rldk monitor: watch a training run live (or once, offline) with guard rules; warn, call webhooks, stop it.
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

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
  std::string alerts_path;  // --alerts FILE (the older tool's flag): alerts.jsonl written there instead of OUT/
  std::string regex_name;   // --regex NAME: accepted; console lines are recognised without a named pattern
  std::string from_wandb;   // ENTITY/PROJECT/RUN: the run's local .wandb file (offline or synced)
  std::string from_mlflow;  // RUN_ID on the tracking server or in the file store MLFLOW_TRACKING_URI names
  bool quiet = false;
};

namespace fs = std::filesystem;

// A W&B run lives on disk as <WANDB_DIR or .>/wandb/{run,offline-run}-<date>-<RUN>/run-<RUN>.wandb, for offline
// runs and for synced ones alike; when that file is here, rldk follows it (every value, as soon as it is written).
// Otherwise the run is polled on W&B's servers through the GraphQL API (io/wandb_server.h), with the API key of
// W&B's own environment.
bool resolve_wandb(const std::string& path, MonitorOptions& options) {
  std::string run = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  const char* dir_env = std::getenv("WANDB_DIR");
  fs::path root = fs::path(dir_env != nullptr && *dir_env != '\0' ? dir_env : ".") / "wandb";
  std::error_code ec;
  if (!run.empty() && fs::is_directory(root, ec)) {
    for (const auto& entry : fs::directory_iterator(root, ec)) {
      std::string name = entry.path().filename().string();
      if (entry.is_directory() && name.size() > run.size() && name.ends_with("-" + run)) {
        fs::path file = entry.path() / ("run-" + run + ".wandb");
        if (fs::exists(file, ec)) {
          options.sources.push_back(file.string());
          return true;
        }
      }
    }
  }
  // Not here: the session polls the W&B API, and says what is missing (a key) if it cannot.
  options.wandb_runs.push_back(path);
  return true;
}

// --from-mlflow RUN_ID: with MLFLOW_TRACKING_URI naming a tracking server (http:, https:), the run is polled through
// the server's REST API; otherwise it is followed in MLflow's file store, <store>/<experiment>/<RUN_ID>/ (the store:
// MLFLOW_TRACKING_URI as a file: URI or path, else ./mlruns).
bool resolve_mlflow(const std::string& run_id, MonitorOptions& options) {
  const char* uri_env = std::getenv("MLFLOW_TRACKING_URI");
  std::string uri = uri_env != nullptr ? uri_env : "";
  if (uri.starts_with("http:") || uri.starts_with("https:")) {
    options.mlflow_runs.push_back({uri, run_id});
    return true;
  }
  if (uri.starts_with("databricks")) {
    std::fprintf(stderr, "rldk monitor: --from-mlflow %s: Databricks-hosted MLflow (%s) is not supported; give "
                         "MLFLOW_TRACKING_URI as the http(s) address of an MLflow tracking server\n",
                 run_id.c_str(), uri.c_str());
    return false;
  }
  fs::path store = uri.empty() ? fs::path("mlruns") : fs::path(uri.starts_with("file://") ? uri.substr(7) : uri);
  std::error_code ec;
  if (fs::is_directory(store, ec)) {
    for (const auto& experiment : fs::directory_iterator(store, ec)) {
      fs::path run = experiment.path() / run_id;
      if (!run_id.empty() && fs::is_directory(run / "metrics", ec)) {
        options.sources.push_back(run.string());
        return true;
      }
    }
  }
  std::fprintf(stderr, "rldk monitor: --from-mlflow %s: no run %s in the MLflow file store %s (set "
                       "MLFLOW_TRACKING_URI to the store's path, or to a tracking server's http address)\n",
               run_id.c_str(), run_id.c_str(), store.string().c_str());
  return false;
}

// The older tool's --preset named a field map (how a trainer names its metrics). Here the metric dictionary maps
// every framework's names by itself, so those names are accepted and need nothing.
constexpr const char* FIELD_MAP_NAMES[] = {"trl", "grpo", "accelerate", "openrlhf", "verl", "ppo", "dpo", "custom"};

bool is_field_map(const std::string& name) {
  for (const char* f : FIELD_MAP_NAMES) {
    if (name == f) return true;
  }
  return false;
}

bool is_preset(const std::string& name) {
  for (const auto& p : preset_names()) {
    if (p == name) return true;
  }
  return false;
}

// --rules takes a rule file, or (as in the older tool) a preset name or a comma-separated list of them.
// --preset takes a preset, or one of the older tool's field-map names (nothing to do, see above).
// Returns false after printing the error when a word is none of these.
bool sort_rule_words(MonitorCliOptions& cli) {
  std::vector<std::string> files;
  for (const auto& word : cli.rule_files) {
    std::error_code ec;
    if (std::filesystem::exists(word, ec)) {
      files.push_back(word);
      continue;
    }
    std::string rest = word;
    while (!rest.empty()) {
      size_t comma = rest.find(',');
      std::string part = rest.substr(0, comma);
      rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
      if (is_preset(part)) {
        cli.presets.push_back(part);
      } else {
        std::string names;
        for (const auto& p : preset_names()) names += (names.empty() ? "" : ", ") + p;
        std::fprintf(stderr, "rldk monitor: --rules %s: no such rule file, and not a preset (%s)\n", part.c_str(),
                     names.c_str());
        return false;
      }
    }
  }
  cli.rule_files = std::move(files);
  std::vector<std::string> presets;
  for (const auto& name : cli.presets) {
    if (!is_preset(name) && is_field_map(name)) {
      std::fprintf(stderr, "rldk monitor: --preset %s: field maps are not needed here (metric names of every "
                           "framework are mapped by the metric dictionary: rldk metrics list)\n", name.c_str());
      continue;
    }
    presets.push_back(name);
  }
  cli.presets = std::move(presets);
  return true;
}

int run(MonitorCliOptions& cli) {
  MonitorOptions& opts = cli.monitor;
  RuleSet rules;
  if (!sort_rule_words(cli)) return EXIT_INPUT_ERROR;
  if (!cli.from_wandb.empty() && !resolve_wandb(cli.from_wandb, opts)) return EXIT_INPUT_ERROR;
  if (!cli.from_mlflow.empty() && !resolve_mlflow(cli.from_mlflow, opts)) return EXIT_INPUT_ERROR;
  if (!cli.alerts_path.empty()) opts.actions.alerts_jsonl = cli.alerts_path;
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
  if (opts.sources.empty() && opts.command.empty() && opts.rollouts.empty() && opts.mlflow_runs.empty() &&
      opts.wandb_runs.empty()) {
    const char* env = std::getenv("RLDK_METRICS_PATH");
    struct stat in {};
    bool piped = ::fstat(0, &in) == 0 && (S_ISFIFO(in.st_mode) || S_ISREG(in.st_mode) || S_ISSOCK(in.st_mode));
    if ((env == nullptr || *env == '\0') && piped) {
      // `python train.py | rldk monitor ...` (or `< run.jsonl`): what comes in on stdin is the source; a terminal
      // or /dev/null is not.
      opts.sources.push_back("-");
    } else if (env == nullptr || *env == '\0') {
      std::fprintf(stderr, "rldk monitor: nothing to watch: give a metrics file or folder, - for stdin, --cmd "
                           "\"python train.py ...\", --rollouts DIR, or set RLDK_METRICS_PATH\n");
      return EXIT_INPUT_ERROR;
    } else {
      opts.sources.push_back(env);
    }
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
  cmd->add_option("--stream", o.sources, "Same as giving SRC: a metrics file, folder or - (the older tool's flag)")
      ->allow_extra_args(false);
  cmd->add_option("--from-wandb", cli->from_wandb,
                  "ENTITY/PROJECT/RUN: follow that W&B run's local log (wandb/*-RUN/run-RUN.wandb under WANDB_DIR "
                  "or .), else poll it on W&B's servers (WANDB_API_KEY or `wandb login`; WANDB_BASE_URL for a "
                  "self-hosted server)");
  cmd->add_option("--from-mlflow", cli->from_mlflow,
                  "RUN_ID: follow that MLflow run: on the tracking server MLFLOW_TRACKING_URI names (http(s)://..., "
                  "polled through its REST API every --poll-interval seconds; MLFLOW_TRACKING_TOKEN or "
                  "MLFLOW_TRACKING_USERNAME/PASSWORD for credentials; the session ends when the run has ended), or "
                  "in a file store (MLFLOW_TRACKING_URI as a path, else ./mlruns)");
  cmd->add_option("--poll-interval", o.server_poll_seconds,
                  "Seconds between two requests for new values of a tracking-server run (--from-mlflow)")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 3600.0));
  cmd->add_option("--rollouts", o.rollouts,
                  "Folder of per-step sample files to follow (TRL's completions/ or the trainer's output folder, "
                  "verl's rollout_data_dir): each new step gives rollout/sampled_reward_mean, rollout/length_reward_corr, "
                  "rollout/saturation_share and rollout/zero_variance_share for rules (run id \"rollouts\"); repeatable")
      ->allow_extra_args(false);
  cmd->add_flag("--once", o.once, "Read the sources to their end, report and exit (for finished runs and CI)");
  cmd->add_option("--cmd", o.command, "Launch this trainer, read its output and RLDK_METRICS_PATH, stop it on a stop action");
  cmd->add_option("--pid", o.pid, "Stop this running trainer on a stop action (a positive pid of a running process; "
                                  "checked to be the same process)");
  cmd->add_option("--preset", cli->presets,
                  "Built-in rule preset (see `rldk rules list`); repeatable. The older tool's field-map names (trl, "
                  "grpo, accelerate, ...) are accepted and need nothing: metric names are mapped automatically")
      ->allow_extra_args(false);
  cmd->add_option("--rules", cli->rule_files,
                  "Rule file (YAML), or a preset name or comma-separated preset names; repeatable")
      ->allow_extra_args(false);
  cmd->add_option("--set-rule", cli->overrides, "Override a rule field: ID.FIELD=VALUE (e.g. grpo_safe_kl_spike.condition=\"value > 0.5\")")->allow_extra_args(false);
  cmd->add_option("--webhook,--alert-webhook", cli->webhooks, "POST every alert to this URL (Slack-compatible JSON); repeatable")->allow_extra_args(false);
  cmd->add_option("--out", o.out_dir, "Folder for alerts.jsonl, alerts.txt and report.json")->capture_default_str();
  cmd->add_option("--alerts", cli->alerts_path, "Write alerts.jsonl to this file instead of OUT/alerts.jsonl");
  cmd->add_option("--report", o.report_path, "Write report.json to this file instead of OUT/report.json");
  cmd->add_option("--regex", cli->regex_name,
                  "Accepted for the older tool's command lines: console metrics (HF/TRL dicts, OpenRLHF, verl, "
                  "key=value) are recognised without naming a pattern");
  cmd->add_option("--fail-on", o.fail_on, "Exit 1 when an alert at this level fired")
      ->check(CLI::IsMember({"never", "warn", "stop"}))
      ->capture_default_str();
  cmd->add_option("--metrics-path", o.metrics_path, "With --cmd: file the trainer writes metrics to (exported as RLDK_METRICS_PATH; default OUT/metrics.jsonl)");
  cmd->add_option("--sys-interval", o.sys_sample_seconds,
                  "With --cmd: seconds between samples of the trainer's process tree (RSS, CPU, open files; GPU "
                  "memory through NVML where there is a driver) as sys/* metrics of run \"sys\", also written to "
                  "OUT/sys.jsonl; the rules see them from the trainer's first logged metric on (start-up is not a leak); 0: off")
      ->capture_default_str()
      ->check(FiniteNonNegative());
  cmd->add_option("--stop-grace", o.stop_grace_seconds, "Seconds between SIGTERM and SIGKILL when stopping")->capture_default_str();
  cmd->add_option("--idle-exit", o.idle_exit_seconds, "Without --cmd: exit after this many seconds without new data (0: never)");
  cmd->add_option("--action-deadline", o.actions.deadline_seconds,
                  "Seconds webhooks and shell actions still get at exit; then requests in flight are cut and waiting "
                  "ones abandoned (counted in report.json summary.undelivered). Actions never delay evaluation")
      ->capture_default_str();
  cmd->add_flag("--allow-shell", o.actions.allow_shell, "Allow shell actions in rule files to run");
  cmd->add_flag("!--no-passthrough", o.passthrough, "With --cmd: do not copy the trainer's output to the console");
  cmd->add_flag("!--no-console-metrics", o.read_command_output, "With --cmd: do not parse metrics from the trainer's output (by default they are read until the trainer's "
                "metrics file or a named source delivers its first value; from then on the console is ignored, so "
                "no number is counted twice)");
  cmd->add_flag("--timestamps", o.actions.timestamps, "Add wall-clock times to alert records");
  cmd->add_flag("-q,--quiet", cli->quiet, "Do not print alerts (they are still written to OUT)");
  cmd->add_option("--run-id", o.read.run_id, "Run id for points that carry none");
  cmd->add_option("--input-format", cli->input_format, "Read sources as this format instead of detecting it")
      ->check(CLI::IsMember({"auto", "jsonl", "json", "csv", "tsv", "console"}));
  cmd->callback([cli, &exit_code] { exit_code = run(*cli); });
}

}  // namespace rldk::cli
