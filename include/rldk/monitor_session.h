// `rldk monitor`: follow a running trainer's metrics (files, a folder, stdin, or the output of a trainer it
// launches), evaluate guard rules, act on alerts, and write alerts and a report.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rldk/actions.h"
#include "rldk/json.h"
#include "rldk/monitor_report.h"
#include "rldk/process.h"
#include "rldk/reader.h"
#include "rldk/rules.h"

namespace rldk {

struct MonitorOptions {
  // Files (followed as they grow; they may not exist yet), folders (the newest run file in them) or "-" (stdin).
  std::vector<std::string> sources;
  // Folders of per-step sample files (TRL's completions/, verl's rollout_data_dir) turned into rollout metrics
  // (rldk/rollout_metrics.h) as each step's file appears; run id "rollouts".
  std::vector<std::string> rollouts;
  // Runs on MLflow tracking servers, read through the REST API every `server_poll_seconds` (live) or once to their
  // end (--once); credentials from MLflow's environment variables. A live session ends when every input has ended:
  // such a run has a final status and nothing new.
  struct TrackingServerRun {
    std::string tracking_uri;  // http(s)://host:port
    std::string run_id;
  };
  std::vector<TrackingServerRun> mlflow_runs;
  // Runs on W&B's servers, ENTITY/PROJECT/RUN, read through the GraphQL API the same way (base URL and API key from
  // W&B's environment: WANDB_BASE_URL, WANDB_API_KEY or ~/.netrc).
  std::vector<std::string> wandb_runs;
  double server_poll_seconds = 5.0;
  bool once = false;                  // read the sources to their end, report and exit (no following)
  std::string command;                // launch this trainer (through /bin/sh) and watch it
  bool read_command_output = true;    // parse the trainer's stdout/stderr for metrics too
  bool passthrough = true;            // copy the trainer's output to the console
  // File the trainer is told to write metrics to (RLDK_METRICS_PATH); followed too. Empty: <out_dir>/metrics.jsonl.
  std::string metrics_path;
  // Stop this external process on a stop action (checked to be the same one); must be > 0 and running.
  std::optional<int64_t> pid;
  double stop_grace_seconds = 10.0;   // SIGTERM, then SIGKILL after this long
  double idle_exit_seconds = 0.0;     // without --cmd: exit after this long without new data (0: until interrupted)
  // With --cmd: every this many seconds the trainer's process tree (RSS, CPU, open files) becomes sys/* metrics of
  // run "sys" (step = sample number), observed by the rules and written to <out_dir>/sys.jsonl. 0: off.
  double sys_sample_seconds = 2.0;
  std::string out_dir = "rldk_monitor";  // alerts.jsonl, alerts.txt and report.json go here
  std::string report_path;            // report.json's path when not <out_dir>/report.json
  std::string fail_on = "stop";       // exit 1 when an alert at this level fired: never | warn | stop
  ReadOptions read;                   // how sources are parsed (run id, canonical names, format)
  // Alert files are set from out_dir when empty; actions.deadline_seconds bounds webhooks and shell actions at exit
  // (--action-deadline); write_roots default to out_dir and the folders of the files read.
  ActionOptions actions;
  bool print_summary = true;
};

struct MonitorResult {
  // MONITOR_EXIT_*: 0 ok, 1 alert, 2 input/usage error, 3 the trainer failed; 128 + signal when SIGINT/SIGTERM cut
  // a --once read short (a live session ends by a signal as usual and keeps its verdict). report.json is written
  // in every case but usage and input errors.
  int exit_code = MONITOR_EXIT_OK;
  uint64_t observations = 0;
  uint64_t alerts = 0;
  bool stop_requested = false;
  std::optional<ExitStatus> command_status;
  Json report;                // what report.json holds (monitor_verdict)
  std::string error;          // for exit code 2
};

MonitorResult run_monitor(RuleSet rules, const MonitorOptions& options);

}  // namespace rldk
