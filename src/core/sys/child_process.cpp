// ChildProcess: a trainer launched by the monitor, in its own process group, output captured through pipes.
//
// posix_spawn (glibc: clone with CLONE_VM|CLONE_VFORK) rather than fork: nothing runs between fork and exec that
// could take a lock or allocate, it is fast even when the monitor holds much memory, and exec failures (a missing
// working directory) come back as an error code instead of a child that exits 127.
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <thread>

#include "rldk/process.h"
#include "sys/pidfd.h"
#include "sys/proc_stat.h"
#include "sys/unique_fd.h"

extern char** environ;  // NOLINT: POSIX declares it nowhere else

namespace rldk {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Descriptors below this stay open in the child (stdin, stdout, stderr); all others are closed.
constexpr int FIRST_CLOSED_FD = 3;

ExitStatus decode(int wait_status) {
  ExitStatus s;
  if (WIFSIGNALED(wait_status)) {
    s.signaled = true;
    s.signal = WTERMSIG(wait_status);
    s.core_dumped = WCOREDUMP(wait_status);
  } else if (WIFEXITED(wait_status)) {
    s.code = WEXITSTATUS(wait_status);
  }
  return s;
}

// The monitor's environment with `overrides` applied ("KEY=value" strings, in the original order, new keys last).
std::vector<std::string> child_environment(const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    bool overridden = std::any_of(overrides.begin(), overrides.end(), [&](const auto& kv) {
      return entry.size() > kv.first.size() && entry.compare(0, kv.first.size(), kv.first) == 0 &&
             entry[kv.first.size()] == '=';
    });
    if (!overridden) env.emplace_back(entry);
  }
  for (const auto& [key, value] : overrides) env.push_back(key + "=" + value);
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// posix_spawn's attribute and file-action objects, destroyed on every path.
struct SpawnSetup {
  posix_spawn_file_actions_t actions{};
  posix_spawnattr_t attributes{};
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attributes);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

}  // namespace

struct ChildProcess::Impl {
  pid_t pid = -1;
  SpawnOptions options;
  sys::UniqueFd out;
  sys::UniqueFd err;
  sys::UniqueFd pidfd;
  std::optional<ExitStatus> status;
  bool group_gone = false;
  bool err_first = false;  // alternates which pipe is read first, so neither can starve the other
  Clock::time_point last_group_scan{};
  bool last_scan_alive = true;
  std::vector<char> buffer;

  ~Impl() {
    if (pid <= 0) return;
    if (!status) {
      // Still running: an aborted monitor must not leave the trainer (and its GPU memory) behind.
      ::kill(-pid, SIGKILL);
      int ws = 0;
      while (::waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
      }
    }
  }

  std::optional<ExitStatus> try_wait() {
    if (status) return status;
    int ws = 0;
    pid_t r = ::waitpid(pid, &ws, WNOHANG);
    if (r == pid) {
      status = decode(ws);
      pidfd.reset();  // it stays readable forever now; keep it out of poll sets
    } else if (r < 0 && errno == ECHILD) {
      // Reaped elsewhere (the host application set SIGCHLD to SIG_IGN): it has exited, with an unknown status.
      status = ExitStatus{false, -1, 0, false};
      pidfd.reset();
    }
    return status;
  }

  // Whether anything of the child's process group is still running; reaps the leader once it has exited.
  bool group_alive() {
    if (!try_wait()) return true;
    if (group_gone) return false;
    if (::kill(-pid, 0) != 0 && errno == ESRCH) {
      group_gone = true;
      return false;
    }
    // Members are left; they may all be zombies nobody reaps. Listing /proc is costly, so at a bounded rate.
    auto now = Clock::now();
    if (now - last_group_scan >= options.stop.group_scan_interval) {
      last_group_scan = now;
      last_scan_alive = sys::group_has_live_member(pid);
    }
    return last_scan_alive;
  }

  bool signal_group(int signal) {
    if (group_gone) return false;
    if (::kill(-pid, signal) == 0) return true;
    if (errno == ESRCH) group_gone = true;
    return false;
  }

  // Reads one pipe until it is empty, ends, or the budget is used up.
  void read_pipe(sys::UniqueFd& fd, OutputStream stream, const OutputCallback& callback, OutputProgress& progress) {
    while (fd) {
      if (progress.bytes >= options.max_bytes_per_call) {
        progress.more = true;
        return;
      }
      size_t want = std::min<uint64_t>(buffer.size(), options.max_bytes_per_call - progress.bytes);
      ssize_t n = ::read(fd.get(), buffer.data(), want);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        fd.reset();  // a read error on our own pipe: treat as the end of that stream
        return;
      }
      if (n == 0) {
        fd.reset();
        return;
      }
      progress.bytes += static_cast<uint64_t>(n);
      if (callback) callback(stream, std::string_view(buffer.data(), static_cast<size_t>(n)));
    }
  }

  OutputProgress read_output(const OutputCallback& callback) {
    OutputProgress progress;
    if (err_first) {
      read_pipe(err, OutputStream::err, callback, progress);
      read_pipe(out, OutputStream::out, callback, progress);
    } else {
      read_pipe(out, OutputStream::out, callback, progress);
      read_pipe(err, OutputStream::err, callback, progress);
    }
    err_first = !err_first;
    return progress;
  }

  // Sleeps up to `timeout`, waking early for output (read into `callback`) or the leader's exit.
  void wait_step(milliseconds timeout, const OutputCallback& callback) {
    std::array<pollfd, 3> fds{};
    nfds_t n = 0;
    for (int fd : {out.get(), err.get(), status ? -1 : pidfd.get()}) {
      if (fd >= 0) fds[n++] = pollfd{fd, POLLIN, 0};
    }
    int ready = ::poll(fds.data(), n, static_cast<int>(std::max<int64_t>(timeout.count(), 0)));
    if (ready > 0) {
      OutputProgress p;
      do {
        p = read_output(callback);
      } while (p.more);
    }
  }

  // Waits until the group is gone or `deadline`; true when gone.
  bool wait_group_until(Clock::time_point deadline, const OutputCallback& callback) {
    for (;;) {
      if (!group_alive()) return true;
      auto now = Clock::now();
      if (now >= deadline) return false;
      auto left = std::chrono::duration_cast<milliseconds>(deadline - now) + milliseconds(1);
      wait_step(std::min(left, options.stop.check_interval), callback);
    }
  }

  StopReport terminate(milliseconds grace, const OutputCallback& on_output) {
    auto start = Clock::now();
    StopReport report;
    if (!group_alive()) {
      report.already_exited = true;
      report.exited = true;
    } else {
      if (signal_group(SIGTERM)) report.signals.push_back(SIGTERM);
      report.exited = wait_group_until(start + grace, on_output);
      if (!report.exited) {
        if (signal_group(SIGKILL)) report.signals.push_back(SIGKILL);
        report.exited = wait_group_until(Clock::now() + options.stop.kill_wait, on_output);
      }
    }
    report.status = try_wait();
    report.elapsed = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
    return report;
  }
};

ChildProcess::ChildProcess(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ChildProcess::~ChildProcess() = default;
ChildProcess::ChildProcess(ChildProcess&&) noexcept = default;
ChildProcess& ChildProcess::operator=(ChildProcess&&) noexcept = default;

Result<ChildProcess> ChildProcess::spawn(const std::string& command_line, const SpawnOptions& options) {
  if (command_line.empty()) return Error{ErrorCode::invalid_argument, "no command to run", ""};
  return spawn_argv({options.shell, "-c", command_line}, false, command_line, options);
}

Result<ChildProcess> ChildProcess::spawn_program(const std::vector<std::string>& argv, const SpawnOptions& options) {
  if (argv.empty() || argv.front().empty()) return Error{ErrorCode::invalid_argument, "no program to run", ""};
  std::string label;
  for (const auto& arg : argv) label += (label.empty() ? "" : " ") + arg;
  return spawn_argv(argv, argv.front().find('/') == std::string::npos, label, options);
}

Result<ChildProcess> ChildProcess::spawn_argv(std::vector<std::string> arg_strings, bool search_path,
                                              const std::string& command_line, const SpawnOptions& options) {
  if (options.chunk_bytes == 0 || options.max_bytes_per_call == 0) {
    return Error{ErrorCode::invalid_argument, "chunk_bytes and max_bytes_per_call must be positive", ""};
  }
  for (const auto& [key, value] : options.environment) {
    if (key.empty() || key.find('=') != std::string::npos) {
      return Error{ErrorCode::invalid_argument, "bad environment variable name '" + key + "'", command_line};
    }
  }
  if (!options.working_directory.empty()) {
    struct stat st {};
    if (::stat(options.working_directory.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return Error{ErrorCode::not_found, "no such working directory", options.working_directory};
    }
  }

  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    return Error{ErrorCode::io, std::string("cannot create a pipe: ") + std::strerror(errno), command_line};
  }
  sys::UniqueFd out_read(out_pipe[0]), out_write(out_pipe[1]);
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    return Error{ErrorCode::io, std::string("cannot create a pipe: ") + std::strerror(errno), command_line};
  }
  sys::UniqueFd err_read(err_pipe[0]), err_write(err_pipe[1]);

  SpawnSetup setup;
  if (!options.inherit_stdin) {
    posix_spawn_file_actions_addopen(&setup.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  }
  // dup2 onto 1 and 2 clears close-on-exec on the copies only; the pipe ends themselves close at exec.
  posix_spawn_file_actions_adddup2(&setup.actions, out_write.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&setup.actions, err_write.get(), STDERR_FILENO);
  // Descriptors some library opened without O_CLOEXEC must not reach the trainer either (glibc 2.34+).
  posix_spawn_file_actions_addclosefrom_np(&setup.actions, FIRST_CLOSED_FD);
  if (!options.working_directory.empty()) {
    posix_spawn_file_actions_addchdir_np(&setup.actions, options.working_directory.c_str());
  }
  posix_spawnattr_setflags(&setup.attributes,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&setup.attributes, 0);  // a new group led by the child
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&setup.attributes, &none);
  // Ignored signals stay ignored across exec (a monitor ignoring SIGPIPE would pass that on). Reset all but SIGHUP,
  // which `nohup` deliberately ignores for the whole job.
  sigset_t defaults;
  sigfillset(&defaults);
  sigdelset(&defaults, SIGHUP);
  sigdelset(&defaults, SIGKILL);
  sigdelset(&defaults, SIGSTOP);
  posix_spawnattr_setsigdefault(&setup.attributes, &defaults);

  std::vector<std::string> env_strings = child_environment(options.environment);
  const std::string program = arg_strings.front();
  auto argv = pointers(arg_strings);
  auto envp = pointers(env_strings);
  pid_t pid = -1;
  int rc = search_path
               ? ::posix_spawnp(&pid, program.c_str(), &setup.actions, &setup.attributes, argv.data(), envp.data())
               : ::posix_spawn(&pid, program.c_str(), &setup.actions, &setup.attributes, argv.data(), envp.data());
  if (rc != 0) {
    ErrorCode code = (rc == ENOENT || rc == ENOTDIR) ? ErrorCode::not_found : ErrorCode::io;
    return Error{code, "cannot start '" + program + "': " + std::strerror(rc), command_line};
  }

  auto impl = std::make_unique<Impl>();
  impl->pid = pid;
  impl->options = options;
  impl->buffer.resize(options.chunk_bytes);
  out_write.reset();  // the child holds the write ends now; EOF arrives when it (and its descendants) close them
  err_write.reset();
  ::fcntl(out_read.get(), F_SETFL, ::fcntl(out_read.get(), F_GETFL) | O_NONBLOCK);
  ::fcntl(err_read.get(), F_SETFL, ::fcntl(err_read.get(), F_GETFL) | O_NONBLOCK);
  impl->out = std::move(out_read);
  impl->err = std::move(err_read);
  impl->pidfd.reset(sys::open_pidfd(pid));  // safe: an unreaped child's pid cannot be reused
  return ChildProcess(std::move(impl));
}

pid_t ChildProcess::pid() const { return impl_->pid; }
int ChildProcess::stdout_fd() const { return impl_->out.get(); }
int ChildProcess::stderr_fd() const { return impl_->err.get(); }
int ChildProcess::exit_fd() const { return impl_->status ? -1 : impl_->pidfd.get(); }
bool ChildProcess::output_open() const { return impl_->out.valid() || impl_->err.valid(); }

OutputProgress ChildProcess::read_output(const OutputCallback& callback) { return impl_->read_output(callback); }

std::optional<ExitStatus> ChildProcess::try_wait() { return impl_->try_wait(); }

std::optional<ExitStatus> ChildProcess::wait_for(std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  for (;;) {
    if (auto s = impl_->try_wait()) return s;
    auto now = Clock::now();
    if (now >= deadline) return std::nullopt;
    auto left = std::chrono::duration_cast<milliseconds>(deadline - now) + milliseconds(1);
    auto step = std::min(left, impl_->options.stop.check_interval);
    if (impl_->pidfd) {
      pollfd p{impl_->pidfd.get(), POLLIN, 0};
      ::poll(&p, 1, static_cast<int>(left.count()));
    } else {
      std::this_thread::sleep_for(step);
    }
  }
}

ExitStatus ChildProcess::wait() {
  if (impl_->status) return *impl_->status;
  int ws = 0;
  pid_t r;
  while ((r = ::waitpid(impl_->pid, &ws, 0)) < 0 && errno == EINTR) {
  }
  impl_->status = r == impl_->pid ? decode(ws) : ExitStatus{false, -1, 0, false};
  impl_->pidfd.reset();
  return *impl_->status;
}

const std::optional<ExitStatus>& ChildProcess::status() const { return impl_->status; }

bool ChildProcess::signal_group(int signal) { return impl_->signal_group(signal); }

StopReport ChildProcess::terminate(const OutputCallback& on_output) {
  return impl_->terminate(impl_->options.stop.grace, on_output);
}

StopReport ChildProcess::terminate(std::chrono::milliseconds grace, const OutputCallback& on_output) {
  return impl_->terminate(grace, on_output);
}

}  // namespace rldk
