// Rule actions through the dispatcher: sentinel files confined to their roots and kept off the inputs, shell
// commands with quoted values, and webhooks on a bounded queue that a silent endpoint cannot stall past the
// deadline (issue 12, items 7, 8 and 11).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <thread>

#include "act/action_queue.h"
#include "rldk/actions.h"
#include "test_support.h"

namespace rldk {
namespace {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// A TCP port that completes connections (the kernel's backlog does) and never answers.
struct SilentPort {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  int port = 0;
  SilentPort() {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(fd, 128);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    port = ntohs(addr.sin_port);
  }
  ~SilentPort() { ::close(fd); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port) + "/hook"; }
};

Alert alert_for(const Rule& rule, const std::string& run_id, int64_t step = 1) {
  Alert a;
  a.rule_id = rule.id;
  a.run_id = run_id;
  a.metric = "policy/kl";
  a.step = step;
  a.value = 0.5;
  a.message = "KL high";
  a.rule = &rule;
  return a;
}

Rule rule_with(std::vector<RuleAction> actions) {
  Rule r;
  r.id = "r";
  r.actions = std::move(actions);
  return r;
}

// The statuses of one action's records in alerts.jsonl, in order ("ok" / "error").
std::vector<std::string> statuses(const std::string& alerts_jsonl, const std::string& action) {
  std::vector<std::string> out;
  std::ifstream in(alerts_jsonl);
  for (std::string line; std::getline(in, line);) {
    if (line.find("\"action\":\"" + action + "\"") == std::string::npos) continue;
    out.push_back(line.find("\"status\":\"ok\"") != std::string::npos ? "ok" : "error");
  }
  return out;
}

TEST(Actions, SentinelIsConfinedAndKeptOffTheInputs) {
  rldk_test::TempDir dir;
  fs::path out = fs::path(dir.path()) / "out";
  std::string input = dir.write("out/metrics.jsonl", "{}\n");
  Rule rule = rule_with({RuleAction{"sentinel", {{"path", (out / "runs/{run_id}/STOP").string()}}, {}},
                         RuleAction{"sentinel", {{"path", (out / "metrics.jsonl").string()}}, {}},
                         RuleAction{"sentinel", {{"path", "/tmp/rldk_unit_outside_STOP"}}, {}}});
  ActionOptions o;
  o.console = nullptr;
  o.write_roots = {out.string()};
  o.inputs = {input};
  o.alerts_jsonl = dir.path("alerts.jsonl");
  ActionDispatcher d(o);
  d.dispatch(alert_for(rule, "../../../../tmp/x"));
  // The first lands inside its root; the second would overwrite an input, the third lies outside every root.
  EXPECT_EQ(statuses(o.alerts_jsonl, "sentinel"), (std::vector<std::string>{"ok", "error", "error"}));
  EXPECT_TRUE(fs::exists(out / "runs" / "____________tmp_x" / "STOP"));
  EXPECT_FALSE(fs::exists("/tmp/rldk_unit_outside_STOP"));
  std::ifstream kept(input);
  std::string line;
  std::getline(kept, line);
  EXPECT_EQ(line, "{}");
}

TEST(Actions, ShellGetsQuotedValues) {
  rldk_test::TempDir dir;
  fs::path out = fs::path(dir.path()) / "value.txt";
  Rule rule = rule_with({RuleAction{"shell", {{"cmd", "printf %s {run_id} > '" + out.string() + "'"}}, {}}});
  ActionOptions o;
  o.console = nullptr;
  o.allow_shell = true;
  ActionDispatcher d(o);
  std::string hostile = "x'; touch " + dir.path("PWNED") + "; echo '";
  d.dispatch(alert_for(rule, hostile));
  d.close();
  EXPECT_FALSE(fs::exists(dir.path("PWNED")));
  std::ifstream in(out);
  std::string got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(got, hostile);
  EXPECT_EQ(d.delivery().at("shell").delivered, 1u);
}

TEST(Actions, SilentWebhookNeverBlocksDispatchAndIsCutAtTheDeadline) {
  SilentPort port;
  Rule rule = rule_with({RuleAction{"http", {{"url", port.url()}, {"timeout", "5"}, {"retries", "2"}}, {}}});
  ActionOptions o;
  o.console = nullptr;
  o.deadline_seconds = 0.5;
  o.queue_capacity = 4;
  rldk_test::TempDir dir;
  o.alerts_jsonl = dir.path("alerts.jsonl");
  ActionDispatcher d(o);
  auto t0 = Clock::now();
  for (int i = 1; i <= 20; ++i) d.dispatch(alert_for(rule, "r", i));
  EXPECT_LT(Clock::now() - t0, std::chrono::milliseconds(200));  // evaluation never waits for the webhook
  d.close();
  EXPECT_LT(Clock::now() - t0, std::chrono::milliseconds(1500));
  const ActionDelivery h = d.delivery().at("http");  // delivery() returns a copy: keep the value, not a reference
  EXPECT_EQ(h.queued, 20u);
  EXPECT_EQ(h.delivered, 0u);
  EXPECT_GE(h.dropped, 15u);  // 4 wait at most, one is in flight
  EXPECT_EQ(h.undelivered(), 20u);
  EXPECT_EQ(statuses(o.alerts_jsonl, "http"), std::vector<std::string>(20, "error"));  // each one logged
}

TEST(Actions, CloseGivesUpAtOnceWhenAsked) {
  SilentPort port;
  Rule rule = rule_with({RuleAction{"http", {{"url", port.url()}}, {}}});
  ActionOptions o;
  o.console = nullptr;
  o.deadline_seconds = 30;
  ActionDispatcher d(o);
  d.dispatch(alert_for(rule, "r"));
  auto t0 = Clock::now();
  d.close([&] { return Clock::now() - t0 > std::chrono::milliseconds(100); });
  EXPECT_LT(Clock::now() - t0, std::chrono::milliseconds(1000));
  EXPECT_EQ(d.delivery().at("http").abandoned, 1u);
}

TEST(ActionQueue, DropsTheOldestWhenFull) {
  act::ActionQueue q(2);
  std::vector<int> ran, discarded;
  std::mutex m;
  std::condition_variable go;
  bool release = false;
  // The first job holds the worker, so later ones wait in the queue.
  q.push([&](const act::Cancel&) {
    std::unique_lock<std::mutex> lock(m);
    go.wait(lock, [&] { return release; });
  }, nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (int i = 1; i <= 4; ++i) {
    q.push([&, i](const act::Cancel&) { ran.push_back(i); }, [&, i](const char*) { discarded.push_back(i); });
  }
  {
    std::lock_guard<std::mutex> lock(m);
    release = true;
  }
  go.notify_all();
  EXPECT_TRUE(q.drain(Clock::now() + std::chrono::seconds(5)));
  EXPECT_EQ(ran, (std::vector<int>{3, 4}));
  EXPECT_EQ(discarded, (std::vector<int>{1, 2}));
  EXPECT_EQ(q.counts().dropped, 2u);
}

}  // namespace
}  // namespace rldk
