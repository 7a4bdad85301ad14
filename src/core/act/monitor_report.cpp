#include "rldk/monitor_report.h"

namespace rldk {
namespace {

bool fails(const AlertTally& tally, FailOn fail_on) {
  switch (fail_on) {
    case FailOn::never: return false;
    case FailOn::warn: return tally.alerts > 0;
    case FailOn::stop: return tally.stop_alerts > 0;
  }
  return false;
}

int exit_code(const AlertTally& tally, const SessionFacts& facts) {
  if (fails(tally, facts.fail_on)) return MONITOR_EXIT_ALERT;
  // A trainer that failed after the monitor asked it to stop did what it was asked.
  if (facts.command && !facts.command->success && !tally.stop_requested()) return MONITOR_EXIT_TRAINER_FAILED;
  return MONITOR_EXIT_OK;
}

Json string_array(const std::vector<std::string>& items) {
  Json out = Json::Array{};
  for (const auto& item : items) out.push_back(item);
  return out;
}

Json command_json(const CommandOutcome& c) {
  Json cmd;
  cmd["command"] = c.command;
  cmd["exit"] = c.exit;
  cmd["exit_code"] = c.exit_code;
  if (c.signals_sent) cmd["signals_sent"] = string_array(*c.signals_sent);
  return cmd;
}

// Slow actions not delivered, per kind and in total: what a hung webhook or a full queue cost.
Json undelivered_json(const std::map<std::string, ActionDelivery>& delivery) {
  Json out;
  uint64_t total = 0;
  for (const auto& [kind, d] : delivery) {
    Json k;
    k["queued"] = d.queued;
    k["delivered"] = d.delivered;
    k["failed"] = d.failed;
    k["dropped"] = d.dropped;
    k["abandoned"] = d.abandoned;
    out[kind] = k;
    total += d.undelivered();
  }
  out["total"] = total;
  return out;
}

}  // namespace

Result<FailOn> parse_fail_on(const std::string& name) {
  if (name == "never") return FailOn::never;
  if (name == "warn") return FailOn::warn;
  if (name == "stop") return FailOn::stop;
  return Error{ErrorCode::invalid_argument, "fail_on is '" + name + "'; expected never, warn or stop", ""};
}

const char* fail_on_name(FailOn fail_on) {
  switch (fail_on) {
    case FailOn::never: return "never";
    case FailOn::warn: return "warn";
    case FailOn::stop: return "stop";
  }
  return "stop";
}

void AlertTally::add(const Alert& alert) {
  ++alerts;
  if (alert.stop) ++stop_alerts;
}

MonitorVerdict monitor_verdict(const RuleEngine& engine, const Json& records, const AlertTally& tally,
                               const SessionFacts& facts) {
  MonitorVerdict verdict;
  verdict.exit_code = exit_code(tally, facts);
  Json& report = verdict.report;
  report["schema"] = MONITOR_REPORT_SCHEMA;
  report["rules"] = engine.rule_report();
  report["alerts"] = records.is_null() ? Json(Json::Array{}) : records;
  Json summary;
  summary["observations"] = engine.observations();
  summary["alerts"] = tally.alerts;
  summary["stop_requested"] = tally.stop_requested();
  summary["evaluation_errors"] = engine.evaluation_errors();
  summary["exit_code"] = verdict.exit_code;
  summary["fail_on"] = fail_on_name(facts.fail_on);
  summary["sources"] = string_array(facts.sources);
  if (facts.command) summary["command"] = command_json(*facts.command);
  summary["input_problems"] = facts.input_problems;
  if (facts.interrupted) summary["interrupted"] = *facts.interrupted;
  if (!facts.delivery.empty()) summary["undelivered"] = undelivered_json(facts.delivery);
  report["summary"] = summary;
  return verdict;
}

}  // namespace rldk
