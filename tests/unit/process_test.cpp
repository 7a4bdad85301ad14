// Process control on real processes: output capture, exit statuses, the SIGTERM -> grace -> SIGKILL stop policy for
// a child's whole process group, pid identity checks for external trainers, and signal forwarding.
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "rldk/process.h"
#include "sys/proc_stat.h"
#include "test_support.h"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using rldk::ChildProcess;
using rldk::OutputStream;
using rldk::ProcessIdentity;

struct Output {
  std::string out, err;
  rldk::OutputCallback callback() {
    return [this](OutputStream s, std::string_view bytes) { (s == OutputStream::out ? out : err).append(bytes); };
  }
};

ChildProcess spawn(const std::string& command, const rldk::SpawnOptions& options = {}) {
  auto child = ChildProcess::spawn(command, options);
  EXPECT_TRUE(child.ok()) << (child.ok() ? "" : rldk::to_string(child.error()));
  return std::move(child.value());
}

// Reads output until `done` holds, both pipes end, or `timeout` passes.
bool read_until(ChildProcess& child, Output& output, const std::function<bool()>& done,
                std::chrono::milliseconds timeout = 2000ms) {
  auto deadline = Clock::now() + timeout;
  auto callback = output.callback();
  while (Clock::now() < deadline) {
    child.read_output(callback);
    if (done()) return true;
    if (!child.output_open()) return done();
    pollfd fds[2] = {{child.stdout_fd(), POLLIN, 0}, {child.stderr_fd(), POLLIN, 0}};
    ::poll(fds, 2, 20);
  }
  return done();
}

// Gone, or a zombie nobody reaps: either way no longer running.
bool not_running(pid_t pid) {
  auto stat = rldk::sys::read_proc_stat(pid);
  return !stat || stat->state == 'Z' || stat->state == 'X';
}

bool wait_not_running(pid_t pid, std::chrono::milliseconds timeout = 1000ms) {
  auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (not_running(pid)) return true;
    std::this_thread::sleep_for(5ms);
  }
  return not_running(pid);
}

std::vector<pid_t> pids_in(const std::string& text) {
  std::vector<pid_t> pids;
  std::istringstream in(text);
  for (long pid; in >> pid;) pids.push_back(static_cast<pid_t>(pid));
  return pids;
}

rldk::SpawnOptions quick_stop(std::chrono::milliseconds grace) {
  rldk::SpawnOptions o;
  o.stop.grace = grace;
  o.stop.kill_wait = 2000ms;
  return o;
}

// ---------------------------------------------------------------------------------------------------------------
// ChildProcess.

TEST(ProcessChild, CapturesStdoutAndStderrSeparately) {
  auto child = spawn("echo out 1; echo err 1 >&2; printf 'out 2'; exit 3");
  Output o;
  ASSERT_TRUE(read_until(child, o, [&] { return false; }) || !child.output_open());
  EXPECT_EQ(o.out, "out 1\nout 2");
  EXPECT_EQ(o.err, "err 1\n");
  auto status = child.wait();
  EXPECT_FALSE(status.signaled);
  EXPECT_EQ(status.code, 3);
  EXPECT_EQ(status.describe(), "exit code 3");
  EXPECT_EQ(status.shell_code(), 3);
  EXPECT_EQ(child.stdout_fd(), -1);
  EXPECT_EQ(child.stderr_fd(), -1);
}

TEST(ProcessChild, ReportsDeathBySignal) {
  auto killed = spawn("kill -9 $$");
  auto s = killed.wait();
  EXPECT_TRUE(s.signaled);
  EXPECT_EQ(s.signal, SIGKILL);
  EXPECT_EQ(s.describe(), "killed by SIGKILL");
  EXPECT_EQ(s.shell_code(), 137);
  auto ok = spawn("true");
  EXPECT_TRUE(ok.wait().success());
  auto missing = spawn("/no/such/program 2>/dev/null");
  EXPECT_EQ(missing.wait().code, 127);  // the shell's "command not found"
}

TEST(ProcessChild, TryWaitAndWaitFor) {
  auto child = spawn("sleep 0.2; exit 5");
  EXPECT_FALSE(child.try_wait().has_value());
  EXPECT_FALSE(child.wait_for(30ms).has_value());
  auto s = child.wait_for(2000ms);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->code, 5);
  ASSERT_TRUE(child.status().has_value());
  EXPECT_EQ(child.exit_fd(), -1);
  EXPECT_EQ(child.try_wait()->code, 5);
}

TEST(ProcessChild, OwnProcessGroup) {
  auto child = spawn("exec sleep 5");
  EXPECT_EQ(::getpgid(child.pid()), child.pid());
  EXPECT_NE(::getpgid(child.pid()), ::getpgrp());
  EXPECT_GE(child.exit_fd(), 0);
  child.terminate(1000ms);
}

TEST(ProcessChild, EnvironmentAndWorkingDirectory) {
  rldk_test::TempDir dir;
  rldk::SpawnOptions o;
  o.environment = {{"RLDK_TEST_VALUE", "hello world"}, {"HOME", "/nowhere"}};
  o.working_directory = dir.path();
  auto child = spawn(R"sh(printf '%s|%s|%s|%s' "$RLDK_TEST_VALUE" "$HOME" "$(pwd -P)" "${PATH:+path}")sh", o);
  Output out;
  read_until(child, out, [] { return false; });
  EXPECT_EQ(child.wait().code, 0);
  std::string real = std::filesystem::canonical(dir.path()).string();
  EXPECT_EQ(out.out, "hello world|/nowhere|" + real + "|path");  // the rest of the environment is inherited
}

TEST(ProcessChild, InheritsNoOtherDescriptorsAndNoTerminal) {
  int leaked = ::open("/dev/null", O_RDONLY);  // deliberately without O_CLOEXEC
  ASSERT_GE(leaked, 3);
  // Tests each descriptor from 3 to a little past the leaked one with the shell's built-in `[` (a glob over
  // /proc/$$/fd would open a descriptor of its own).
  std::string command = "n=3; while [ $n -le " + std::to_string(leaked + 8) +
                        " ]; do [ -e /proc/$$/fd/$n ] && printf '%s ' $n; n=$((n+1)); done; readlink /proc/$$/fd/0";
  auto child = spawn(command);
  ::close(leaked);
  Output o;
  read_until(child, o, [] { return false; });
  EXPECT_EQ(child.wait().code, 0);
  EXPECT_EQ(o.out, "/dev/null\n") << "stderr: " << o.err;
}

TEST(ProcessChild, IgnoredSignalsAreNotPassedOn) {
  struct sigaction ignore {}, previous {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ASSERT_EQ(::sigaction(SIGPIPE, &ignore, &previous), 0);  // as a monitor that writes to sockets would
  auto child = spawn("grep SigIgn /proc/$$/status");
  ::sigaction(SIGPIPE, &previous, nullptr);
  Output o;
  read_until(child, o, [] { return false; });
  EXPECT_EQ(child.wait().code, 0);
  auto mask = std::stoull(o.out.substr(o.out.find(':') + 1), nullptr, 16);
  EXPECT_EQ(mask & (1ull << (SIGPIPE - 1)), 0u) << o.out;
}

TEST(ProcessChild, SpawnProgramPassesArgumentsWithoutAShell) {
  // Every argument arrives as one literal word: nothing here is expanded, split or run.
  std::vector<std::string> argv = {"printf", "%s|%s", "a b; $(touch /tmp/x) `id` *", "it's \"quoted\""};
  auto child = ChildProcess::spawn_program(argv);
  ASSERT_TRUE(child.ok()) << rldk::to_string(child.error());
  Output output;
  while (child->output_open() || !child->status()) {
    child->read_output(output.callback());
    if (!child->try_wait()) std::this_thread::sleep_for(5ms);
  }
  EXPECT_TRUE(child->status()->success());
  EXPECT_EQ(output.out, "a b; $(touch /tmp/x) `id` *|it's \"quoted\"");
  EXPECT_EQ(ChildProcess::spawn_program({"/no/such/program"}).error().code, rldk::ErrorCode::not_found);
  EXPECT_EQ(ChildProcess::spawn_program({"no-such-program-on-path"}).error().code, rldk::ErrorCode::not_found);
  EXPECT_EQ(ChildProcess::spawn_program({}).error().code, rldk::ErrorCode::invalid_argument);
}

TEST(ProcessChild, SpawnErrors) {
  EXPECT_EQ(ChildProcess::spawn("").error().code, rldk::ErrorCode::invalid_argument);
  rldk::SpawnOptions o;
  o.working_directory = "/no/such/directory";
  EXPECT_EQ(ChildProcess::spawn("true", o).error().code, rldk::ErrorCode::not_found);
  rldk::SpawnOptions shell;
  shell.shell = "/no/such/sh";
  EXPECT_EQ(ChildProcess::spawn("true", shell).error().code, rldk::ErrorCode::not_found);
  rldk::SpawnOptions env;
  env.environment = {{"A=B", "c"}};
  EXPECT_EQ(ChildProcess::spawn("true", env).error().code, rldk::ErrorCode::invalid_argument);
}

TEST(ProcessStop, GracefulTermination) {
  auto child = spawn("exec sleep 30", quick_stop(2000ms));
  auto report = child.terminate();
  EXPECT_EQ(report.signals, std::vector<int>{SIGTERM});
  EXPECT_TRUE(report.exited);
  EXPECT_FALSE(report.already_exited);
  ASSERT_TRUE(report.status.has_value());
  EXPECT_TRUE(report.status->signaled);
  EXPECT_EQ(report.status->signal, SIGTERM);
  EXPECT_LT(report.elapsed, 1000ms);
}

TEST(ProcessStop, KilledAfterGraceWhenTermIsIgnored) {
  auto child = spawn("trap '' TERM; echo ready; sleep 30", quick_stop(10'000ms));
  Output o;
  ASSERT_TRUE(read_until(child, o, [&] { return o.out == "ready\n"; }));
  auto start = Clock::now();
  auto report = child.terminate(300ms);  // the explicit grace overrides the options'
  auto took = Clock::now() - start;
  EXPECT_EQ(report.signals, (std::vector<int>{SIGTERM, SIGKILL}));
  EXPECT_TRUE(report.exited);
  ASSERT_TRUE(report.status.has_value());
  EXPECT_TRUE(report.status->signaled);
  EXPECT_EQ(report.status->signal, SIGKILL);
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 2500ms);
  EXPECT_EQ(rldk::signal_name(report.signals[1]), "SIGKILL");
}

TEST(ProcessStop, WholeGroupGoesIncludingGrandchildren) {
  // The shell dies of SIGTERM at once; one grandchild ignores SIGTERM (it prints its pid once it does) and outlives
  // it, the other does not.
  auto child = spawn(R"sh(sh -c 'trap "" TERM; echo $$; exec sleep 30' & sleep 30 & echo $!; wait)sh",
                     quick_stop(300ms));
  Output o;
  ASSERT_TRUE(read_until(child, o, [&] { return pids_in(o.out).size() == 2; })) << o.out;
  auto grandchildren = pids_in(o.out);
  for (pid_t pid : grandchildren) {
    EXPECT_EQ(::getpgid(pid), child.pid());
  }
  auto report = child.terminate(o.callback());
  EXPECT_EQ(report.signals, (std::vector<int>{SIGTERM, SIGKILL}));
  EXPECT_TRUE(report.exited);
  ASSERT_TRUE(report.status.has_value());
  EXPECT_EQ(report.status->signal, SIGTERM);  // the leader's own status
  for (pid_t pid : grandchildren) EXPECT_TRUE(wait_not_running(pid)) << "grandchild " << pid << " survived";
  EXPECT_FALSE(rldk::sys::group_has_live_member(child.pid()));
}

TEST(ProcessStop, OutputKeepsFlowingWhileStopping) {
  // The trainer's SIGTERM handler writes more than a pipe holds before exiting: the stop must keep reading.
  auto child = spawn("trap 'yes x | head -c 200000; exit 0' TERM; echo ready; while :; do sleep 0.05; done",
                     quick_stop(2000ms));
  Output o;
  ASSERT_TRUE(read_until(child, o, [&] { return o.out == "ready\n"; }));
  auto report = child.terminate(o.callback());
  EXPECT_EQ(report.signals, std::vector<int>{SIGTERM});
  EXPECT_TRUE(report.exited);
  ASSERT_TRUE(report.status.has_value());
  EXPECT_TRUE(report.status->success()) << report.status->describe();
  read_until(child, o, [] { return false; });  // whatever is still in the pipes
  EXPECT_EQ(o.out.size(), std::string("ready\n").size() + 200000);
}

TEST(ProcessStop, AlreadyExited) {
  auto child = spawn("exit 4");
  EXPECT_EQ(child.wait().code, 4);
  auto report = child.terminate(100ms);
  EXPECT_TRUE(report.already_exited);
  EXPECT_TRUE(report.exited);
  EXPECT_TRUE(report.signals.empty());
  EXPECT_EQ(report.status->code, 4);
}

TEST(ProcessStop, DestroyingARunningChildKillsItsGroup) {
  pid_t grandchild = 0;
  {
    auto child = spawn("sleep 30 & echo $!; wait");
    Output o;
    ASSERT_TRUE(read_until(child, o, [&] { return pids_in(o.out).size() == 1; }));
    grandchild = pids_in(o.out)[0];
  }
  EXPECT_TRUE(wait_not_running(grandchild));
}

// ---------------------------------------------------------------------------------------------------------------
// ProcessIdentity and terminate_external.

TEST(ProcessIdentityTest, ParsesStatWithAwkwardNames) {
  std::string fields;
  for (int i = 4; i <= 52; ++i) fields += " " + std::to_string(i == 5 ? 777 : i == 22 ? 123456 : i);
  auto stat = rldk::sys::parse_proc_stat("42 (a) (b c)) S" + fields);
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(stat->comm, "a) (b c)");
  EXPECT_EQ(stat->state, 'S');
  EXPECT_EQ(stat->process_group, 777);
  EXPECT_EQ(stat->start_ticks, 123456u);
  EXPECT_FALSE(rldk::sys::parse_proc_stat("42 (x").has_value());
  EXPECT_FALSE(rldk::sys::parse_proc_stat("42 (x) S 1 2").has_value());
}

TEST(ProcessIdentityTest, CapturesTheRunningProcess) {
  auto self = ProcessIdentity::capture(::getpid());
  ASSERT_TRUE(self.ok());
  EXPECT_GT(self->start_ticks, 0u);
  EXPECT_FALSE(self->comm.empty());
  EXPECT_NE(self->cmdline.find("rldk_unit_tests"), std::string::npos) << self->cmdline;
  EXPECT_TRUE(self->still_same());
  EXPECT_EQ(ProcessIdentity::capture(0).error().code, rldk::ErrorCode::invalid_argument);
  // Above the kernel's largest pid (4194304): cannot exist.
  EXPECT_EQ(ProcessIdentity::capture(4194305 + 7).error().code, rldk::ErrorCode::not_found);
}

TEST(ProcessIdentityTest, ExitedProcessIsNoLongerTheSame) {
  auto child = spawn("exec sleep 0.2");
  auto identity = ProcessIdentity::capture(child.pid());
  ASSERT_TRUE(identity.ok());
  EXPECT_TRUE(identity->still_same());
  // Wait for the exit without reaping: a zombie counts as exited.
  pollfd p{child.exit_fd(), POLLIN, 0};
  ASSERT_GE(p.fd, 0);
  ASSERT_EQ(::poll(&p, 1, 2000), 1);
  EXPECT_EQ(identity->check(), ProcessIdentity::Check::exited);
  EXPECT_FALSE(identity->still_same());
  EXPECT_EQ(ProcessIdentity::capture(child.pid()).error().code, rldk::ErrorCode::invalid_argument);  // a zombie
  auto stop = rldk::terminate_external(identity.value(), 100ms);
  ASSERT_TRUE(stop.ok());
  EXPECT_TRUE(stop->already_exited);
  EXPECT_TRUE(stop->signals.empty());
  EXPECT_TRUE(child.wait().success());
  EXPECT_EQ(identity->check(), ProcessIdentity::Check::exited);  // reaped: gone
}

TEST(ProcessIdentityTest, RefusesAPidWhoseStartTimeChanged) {
  auto child = spawn("exec sleep 30");
  auto identity = ProcessIdentity::capture(child.pid());
  ASSERT_TRUE(identity.ok());
  // What the monitor would hold if the trainer had died and this process had later received its pid.
  ProcessIdentity stale = identity.value();
  stale.start_ticks -= 1;
  EXPECT_EQ(stale.check(), ProcessIdentity::Check::replaced);
  EXPECT_FALSE(stale.still_same());
  auto stop = rldk::terminate_external(stale, 100ms);
  ASSERT_FALSE(stop.ok());
  EXPECT_EQ(stop.error().code, rldk::ErrorCode::invalid_argument);
  EXPECT_NE(stop.error().message.find("another process"), std::string::npos) << stop.error().message;
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(child.try_wait().has_value()) << "the unrelated process was signalled";
  EXPECT_TRUE(identity->still_same());
}

TEST(ProcessIdentityTest, TerminateExternalStopsAndEscalates) {
  auto polite = spawn("exec sleep 30");
  auto identity = ProcessIdentity::capture(polite.pid());
  ASSERT_TRUE(identity.ok());
  auto report = rldk::terminate_external(identity.value(), 2000ms);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->signals, std::vector<int>{SIGTERM});
  EXPECT_TRUE(report->exited);
  EXPECT_FALSE(report->status.has_value());
  EXPECT_EQ(polite.wait().signal, SIGTERM);

  auto stubborn = spawn("trap '' TERM; echo ready; exec sleep 30");
  Output out;
  ASSERT_TRUE(read_until(stubborn, out, [&] { return out.out == "ready\n"; }));
  auto stubborn_id = ProcessIdentity::capture(stubborn.pid());
  ASSERT_TRUE(stubborn_id.ok());
  rldk::StopOptions o;
  o.grace = 200ms;
  o.kill_wait = 2000ms;
  report = rldk::terminate_external(stubborn_id.value(), o);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->signals, (std::vector<int>{SIGTERM, SIGKILL}));
  EXPECT_TRUE(report->exited);
  EXPECT_GE(report->elapsed, 200ms);
  EXPECT_EQ(stubborn.wait().signal, SIGKILL);
}

// ---------------------------------------------------------------------------------------------------------------
// SignalForwarder.

TEST(ProcessSignalForwarder, ForwardsInterruptToTheChildGroup) {
  auto child = spawn("trap 'echo got INT; exit 7' INT; echo ready; while :; do sleep 0.05; done");
  Output o;
  ASSERT_TRUE(read_until(child, o, [&] { return o.out == "ready\n"; }));
  struct sigaction before {};
  ::sigaction(SIGINT, nullptr, &before);
  {
    auto forwarder = rldk::SignalForwarder::install(child.pid());
    ASSERT_TRUE(forwarder.ok());
    EXPECT_FALSE(rldk::SignalForwarder::install(child.pid()).ok());  // one at a time
    ASSERT_EQ(::kill(::getpid(), SIGINT), 0);  // as Ctrl-C in the monitor's terminal
    pollfd p{forwarder.value()->poll_fd(), POLLIN, 0};
    EXPECT_EQ(::poll(&p, 1, 1000), 1);
    EXPECT_EQ(forwarder.value()->take(), std::vector<int>{SIGINT});
    EXPECT_TRUE(forwarder.value()->take().empty());
    ASSERT_TRUE(read_until(child, o, [&] { return o.out == "ready\ngot INT\n"; })) << o.out;
    EXPECT_EQ(child.wait().code, 7);
  }
  struct sigaction after {};
  ::sigaction(SIGINT, nullptr, &after);
  EXPECT_EQ(after.sa_handler, before.sa_handler);  // restored
  auto again = rldk::SignalForwarder::install(child.pid());
  EXPECT_TRUE(again.ok());
}

}  // namespace

TEST(ExecForm, PutsExecBeforeAProgramAfterAssignments) {
  EXPECT_EQ(rldk::exec_form("sh t.sh --seed $SEED"), "exec sh t.sh --seed $SEED");
  EXPECT_EQ(rldk::exec_form("FOO=bar BAZ='a b' sh t.sh"), "FOO=bar BAZ='a b' exec sh t.sh");
  EXPECT_EQ(rldk::exec_form("  /usr/bin/env python3 t.py"), "  exec /usr/bin/env python3 t.py");
}

TEST(ExecForm, LeavesWhatOnlyTheShellCanRunAlone) {
  for (std::string c : {"exit 7", "cd /tmp", "FOO=bar", "sh a.sh; sh b.sh", "sh a.sh | tee x", "sh a.sh > x",
                        "(sh a.sh)", "$(which sh) a.sh", "'sh' a.sh", "if true; then sh; fi", "sh 'unclosed",
                        "no-such-program-anywhere x"}) {
    EXPECT_EQ(rldk::exec_form(c), c) << c;
  }
}

TEST(ExecForm, RunsWhatShDashCRuns) {
  // The exit status and environment the trainer sees are the same with and without the rewrite.
  for (std::string c : {"FOO=bar sh -c 'exit ${#FOO}'", "exit 7", "true", "sh -c 'exit 5' extra"}) {
    auto plain = rldk::ChildProcess::spawn(c);
    auto rewritten = rldk::ChildProcess::spawn(rldk::exec_form(c));
    ASSERT_TRUE(plain.ok() && rewritten.ok()) << c;
    auto a = plain->wait();
    auto b = rewritten->wait();
    EXPECT_EQ(a.describe(), b.describe()) << c;
  }
}
