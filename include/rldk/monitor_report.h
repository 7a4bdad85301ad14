// A monitor session's verdict: its exit code and its report (report.json, schema rldk.monitor-report/v1), decided
// in one place for `rldk monitor` and for the in-process rldk.Monitor, so the command and a Python session that saw
// the same alerts always report and exit alike. docs/schemas/rldk.monitor-report.v1.schema.json is the contract.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rldk/actions.h"
#include "rldk/json.h"
#include "rldk/monitor.h"
#include "rldk/result.h"

namespace rldk {

inline constexpr const char* MONITOR_REPORT_SCHEMA = "rldk.monitor-report/v1";

// Exit codes of a monitor session (a contract: scripts and CI gates read them).
inline constexpr int MONITOR_EXIT_OK = 0;
inline constexpr int MONITOR_EXIT_ALERT = 1;            // an alert at or above fail_on fired
inline constexpr int MONITOR_EXIT_INPUT_ERROR = 2;      // unusable input or options
inline constexpr int MONITOR_EXIT_TRAINER_FAILED = 3;   // the trainer it launched failed on its own

// Which alerts make a session exit with MONITOR_EXIT_ALERT: none, any alert, or alerts of rules that stop the run.
enum class FailOn { never, warn, stop };
// "never", "warn" or "stop"; anything else is an invalid_argument error that names fail_on.
Result<FailOn> parse_fail_on(const std::string& name);
const char* fail_on_name(FailOn fail_on);

// The alerts a session raised, as its verdict counts them. Every alert goes through add(), whether or not actions
// were dispatched for it.
struct AlertTally {
  uint64_t alerts = 0;
  uint64_t stop_alerts = 0;  // raised by rules with a stop action
  void add(const Alert& alert);
  bool stop_requested() const { return stop_alerts > 0; }
};

// How a trainer the monitor launched ended.
struct CommandOutcome {
  std::string command;
  std::string exit;       // in words (ExitStatus::describe)
  int exit_code = 0;      // as a shell reports it
  bool success = true;
  std::optional<std::vector<std::string>> signals_sent;  // set when the monitor stopped it
};

// What the report states about the session beyond its rules and alerts.
struct SessionFacts {
  FailOn fail_on = FailOn::stop;
  std::vector<std::string> sources;  // what was followed, as given
  uint64_t input_problems = 0;       // malformed lines and read errors
  std::optional<CommandOutcome> command;
  // The signal that ended the session ("SIGINT", "SIGTERM"); reported as summary.interrupted when set.
  std::optional<std::string> interrupted;
  // Per slow action kind (http, shell) that was used; reported as summary.undelivered when any was queued.
  std::map<std::string, ActionDelivery> delivery;
};

struct MonitorVerdict {
  int exit_code = MONITOR_EXIT_OK;
  Json report;  // rldk.monitor-report/v1
};

// `records`: the action records of the session (what alerts.jsonl holds), in the order the actions completed.
// Exit code: MONITOR_EXIT_ALERT when an alert at or above fail_on fired; else MONITOR_EXIT_TRAINER_FAILED when the
// trainer failed without being asked to stop; else MONITOR_EXIT_OK.
MonitorVerdict monitor_verdict(const RuleEngine& engine, const Json& records, const AlertTally& tally,
                               const SessionFacts& facts);

}  // namespace rldk
