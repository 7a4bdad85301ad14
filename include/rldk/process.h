// Process control for the live monitor: launch a trainer as a child (its output read through pipes) and stop it,
// or stop an external trainer given by pid without ever signalling a process that merely reuses its pid.
//
// Stop policy, for both: SIGTERM, wait up to a grace period for the process (a child: its whole process group) to
// exit, then SIGKILL and wait a little more. Trainers are expected to catch SIGTERM and save a checkpoint, so the
// grace period is generous by default, and a child's output keeps being read while it shuts down (a trainer blocked
// writing to a full pipe could not exit).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rldk/result.h"

namespace rldk {

// How a process ended.
struct ExitStatus {
  bool signaled = false;     // killed by `signal`, else exited with `code`
  int code = 0;
  int signal = 0;
  bool core_dumped = false;

  bool success() const { return !signaled && code == 0; }
  // "exit code 3", "killed by SIGKILL" (plus " (core dumped)").
  std::string describe() const;
  // The shell convention: code, or 128 + signal.
  int shell_code() const { return signaled ? 128 + signal : code; }
};

// "SIGTERM", "SIGKILL", ...; "SIG<n>" for numbers without a name.
std::string signal_name(int signal);

struct StopOptions {
  // How long the process gets to exit after SIGTERM before SIGKILL.
  std::chrono::milliseconds grace{10'000};
  // How long to wait for the exit after SIGKILL (a process in uninterruptible I/O dies only when that finishes).
  std::chrono::milliseconds kill_wait{5'000};
  // How often to check whether the process has exited while waiting.
  std::chrono::milliseconds check_interval{10};
  // A child's leader has exited but its process group still exists: how often to list /proc to see whether what
  // is left are only zombies (listing costs one read per process on the machine, so it runs less often).
  std::chrono::milliseconds group_scan_interval{100};
};

// What a stop did.
struct StopReport {
  std::vector<int> signals;           // sent, in order: empty, {SIGTERM} or {SIGTERM, SIGKILL}
  bool already_exited = false;        // it had exited before anything was sent
  bool exited = false;                // it is gone now (a child: its whole process group)
  std::optional<ExitStatus> status;   // a child's exit status (unknown for an external process)
  std::chrono::milliseconds elapsed{0};
};

enum class OutputStream { out, err };
std::string_view output_stream_name(OutputStream stream);  // "stdout" / "stderr"

// `bytes` is valid only during the call.
using OutputCallback = std::function<void(OutputStream stream, std::string_view bytes)>;

struct OutputProgress {
  uint64_t bytes = 0;  // delivered by this call
  bool more = false;   // stopped at max_bytes_per_call with output left: call again now
};

struct SpawnOptions {
  std::string shell = "/bin/sh";  // runs `shell -c command_line`
  // Added to (or replacing entries of) the monitor's environment.
  std::vector<std::pair<std::string, std::string>> environment;
  std::string working_directory;  // empty: the monitor's
  // stdin of the child: /dev/null by default. The child runs in its own process group, so when it reads a
  // terminal it is stopped with SIGTTIN; only inherit stdin for input that is not the controlling terminal.
  bool inherit_stdin = false;
  size_t chunk_bytes = size_t{64} << 10;          // largest piece handed to an OutputCallback
  size_t max_bytes_per_call = size_t{4} << 20;    // most bytes one read_output() call delivers
  StopOptions stop;                               // defaults for terminate()
};

// `command` with `exec` put before its program when it is one simple command running a program found on PATH (or
// given by path), after any leading NAME=value assignments: `FOO=1 python t.py` becomes `FOO=1 exec python t.py`.
// The shell then becomes the trainer, so the trainer itself receives a stop signal and its own exit status is
// reported (Debian's dash does not exec the last command of `sh -c` itself, and dies of a SIGTERM meant for the
// trainer). Anything else (a builtin such as `exit 7` or `cd`, a list, a pipeline, a redirection, a substitution)
// is returned unchanged; either way the shell runs exactly what `sh -c command` runs.
std::string exec_form(const std::string& command);

// A command run as `/bin/sh -c command_line` in a new process group, with stdout and stderr captured through
// non-blocking pipes. Nothing else leaks into it: every other descriptor is closed in the child, and signal
// dispositions are reset to their defaults (SIGHUP excepted, so `nohup rldk ...` still protects the trainer).
// Destroying a ChildProcess whose command still runs kills its process group with SIGKILL (call terminate() first
// for a graceful stop), so an aborted monitor never leaves a trainer holding GPUs. Not thread-safe; movable.
class ChildProcess {
 public:
  // Errors: invalid_argument (empty command, bad options), not_found (no such working directory or shell),
  // io (the system refused: no more processes or descriptors).
  static Result<ChildProcess> spawn(const std::string& command_line, const SpawnOptions& options = {});
  // The same without a shell: runs argv[0] (a path, or a name looked up on PATH) with exactly these arguments, so
  // no argument is ever parsed by a shell (options.shell is unused). Errors as spawn(), and not_found when the
  // program does not exist.
  static Result<ChildProcess> spawn_program(const std::vector<std::string>& argv, const SpawnOptions& options = {});
  ~ChildProcess();
  ChildProcess(ChildProcess&&) noexcept;
  ChildProcess& operator=(ChildProcess&&) noexcept;

  pid_t pid() const;  // also the process group id
  // Pipe ends for poll(2) (POLLIN); -1 once that stream reached its end.
  int stdout_fd() const;
  int stderr_fd() const;
  // Readable (POLLIN) when the child has exited, without reaping it (a pidfd); -1 where the kernel lacks pidfds.
  // The child's exit is also noticed by try_wait(), which a loop should call at least at its poll timeout: its
  // output pipes may stay open after it exits, held by a grandchild.
  int exit_fd() const;
  bool output_open() const;  // either pipe still open

  // Delivers what the pipes hold now, without blocking.
  OutputProgress read_output(const OutputCallback& callback);

  // The exit status once the child (the process the shell became, or the shell) has exited; reaps it.
  std::optional<ExitStatus> try_wait();
  std::optional<ExitStatus> wait_for(std::chrono::milliseconds timeout);
  ExitStatus wait();
  // The status, once known.
  const std::optional<ExitStatus>& status() const;

  // Sends `signal` to the whole process group; false when no process of it is left.
  bool signal_group(int signal);
  // Stops the child and everything in its process group (stop policy above), reading output meanwhile into
  // `on_output` (pass the callback that handles output normally; without one, output during the stop is dropped).
  StopReport terminate(const OutputCallback& on_output = {});
  StopReport terminate(std::chrono::milliseconds grace, const OutputCallback& on_output = {});

 private:
  struct Impl;
  explicit ChildProcess(std::unique_ptr<Impl> impl);
  static Result<ChildProcess> spawn_argv(std::vector<std::string> argv, bool search_path,
                                         const std::string& command_line, const SpawnOptions& options);
  std::unique_ptr<Impl> impl_;
};

// Who a pid named when the monitor started, so the monitor never signals a process that later got the same pid.
// Captured from /proc/PID/stat: the start time (field 22, clock ticks since boot) tells pid reuse apart.
struct ProcessIdentity {
  pid_t pid = 0;
  uint64_t start_ticks = 0;
  std::string comm;     // the kernel's short name (field 2)
  std::string cmdline;  // arguments joined with spaces, for messages; empty for kernel threads and zombies

  enum class Check {
    same,      // the same process, alive
    exited,    // gone, or a zombie (it has exited; only its parent's wait() is missing)
    replaced,  // the pid now names another process
  };

  // Errors: not_found (no such process), invalid_argument (pid <= 0, or the process is already a zombie).
  static Result<ProcessIdentity> capture(pid_t pid);
  Check check() const;
  bool still_same() const { return check() == Check::same; }
  std::string describe() const;  // "pid 1234 (python3 train.py ...)"
};

// Stops the external process of `identity` (stop policy above; the process only, not its group, which for a
// process started from a shell may hold unrelated jobs). It is signalled only after re-checking its identity
// through a pidfd (so no pid reuse can slip in between check and signal; a plain re-check of /proc immediately
// before each kill() where the kernel lacks pidfds). A process that has exited meanwhile (gone or zombie) is
// reported as already_exited. Errors: invalid_argument when the pid now names another process, or when the
// monitor is not permitted to signal it.
Result<StopReport> terminate_external(const ProcessIdentity& identity, const StopOptions& options = {});
Result<StopReport> terminate_external(const ProcessIdentity& identity, std::chrono::milliseconds grace);

// Forwards SIGINT and SIGTERM received by the monitor to a child's process group. The child runs in its own group,
// so Ctrl-C in the terminal reaches only the monitor; forwarding gives the trainer the signal it would have got
// without the monitor (and a batch scheduler's SIGTERM). The handler forwards at once (kill(2) is
// async-signal-safe) and records the signal for the monitor's loop, readable through poll_fd(). One instance at a
// time per process; the previous handlers are restored on destruction.
class SignalForwarder {
 public:
  // Errors: invalid_argument (group <= 0, a forwarder already installed), io (no pipe).
  static Result<std::unique_ptr<SignalForwarder>> install(pid_t process_group,
                                                           const std::vector<int>& signals = default_signals());
  static std::vector<int> default_signals();  // SIGINT, SIGTERM
  ~SignalForwarder();
  SignalForwarder(const SignalForwarder&) = delete;
  SignalForwarder& operator=(const SignalForwarder&) = delete;

  int poll_fd() const;     // readable after a signal arrived
  std::vector<int> take();  // the signals received since the last call, in order

 private:
  SignalForwarder() = default;
  std::vector<int> signals_;
};

}  // namespace rldk
