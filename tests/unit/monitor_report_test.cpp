// The monitor's verdict (exit code and rldk.monitor-report/v1), shared by `rldk monitor` and rldk.Monitor.
#include <gtest/gtest.h>

#include "rldk/monitor.h"
#include "rldk/monitor_report.h"

namespace rldk {
namespace {

Alert alert(bool stop) {
  Alert a;
  a.rule_id = "r";
  a.stop = stop;
  return a;
}

int exit_with(const AlertTally& tally, FailOn fail_on, std::optional<CommandOutcome> command = std::nullopt) {
  RuleEngine engine{RuleSet{}};
  SessionFacts facts;
  facts.fail_on = fail_on;
  facts.command = std::move(command);
  return monitor_verdict(engine, Json::Array{}, tally, facts).exit_code;
}

TEST(MonitorVerdict, ExitCodeFollowsFailOn) {
  AlertTally warn_only;
  warn_only.add(alert(false));
  EXPECT_EQ(exit_with(warn_only, FailOn::never), MONITOR_EXIT_OK);
  EXPECT_EQ(exit_with(warn_only, FailOn::warn), MONITOR_EXIT_ALERT);
  EXPECT_EQ(exit_with(warn_only, FailOn::stop), MONITOR_EXIT_OK);
  AlertTally stopped = warn_only;
  stopped.add(alert(true));
  EXPECT_EQ(exit_with(stopped, FailOn::stop), MONITOR_EXIT_ALERT);
  EXPECT_EQ(stopped.alerts, 2u);
  EXPECT_TRUE(stopped.stop_requested());
}

TEST(MonitorVerdict, AFailedTrainerCountsUnlessItWasStopped) {
  CommandOutcome failed;
  failed.command = "python train.py";
  failed.exit = "exited with code 1";
  failed.exit_code = 1;
  failed.success = false;
  EXPECT_EQ(exit_with(AlertTally{}, FailOn::stop, failed), MONITOR_EXIT_TRAINER_FAILED);
  AlertTally stopped;
  stopped.add(alert(true));
  EXPECT_EQ(exit_with(stopped, FailOn::never, failed), MONITOR_EXIT_OK);
}

TEST(MonitorVerdict, ReportHoldsTheSchemaAndSummary) {
  RuleEngine engine{RuleSet{}};
  AlertTally tally;
  tally.add(alert(true));
  SessionFacts facts;
  facts.fail_on = FailOn::warn;
  facts.sources = {"m.jsonl"};
  Json report = monitor_verdict(engine, Json(), tally, facts).report;
  EXPECT_EQ(report.dump(-1),
            "{\"alerts\":[],\"rules\":{},\"schema\":\"rldk.monitor-report/v1\",\"summary\":{\"alerts\":1,"
            "\"evaluation_errors\":0,\"exit_code\":1,\"fail_on\":\"warn\",\"input_problems\":0,\"observations\":0,"
            "\"sources\":[\"m.jsonl\"],\"stop_requested\":true}}");
}

TEST(MonitorVerdict, FailOnIsParsedOnce) {
  EXPECT_EQ(parse_fail_on("warn").value(), FailOn::warn);
  auto bad = parse_fail_on("sometimes");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("fail_on"), std::string::npos);
  EXPECT_STREQ(fail_on_name(FailOn::never), "never");
}

}  // namespace
}  // namespace rldk
