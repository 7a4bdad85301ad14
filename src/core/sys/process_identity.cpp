// ProcessIdentity and terminate_external: stopping a trainer the monitor did not start, given its pid.
//
// Pids are reused. A monitor that runs for days and then signals "pid 1234" could hit whatever process got that
// number after the trainer died. The identity recorded at start (pid + start time) is checked again before any
// signal; where the kernel has pidfds, the check is made after opening one and every signal goes through it, so
// nothing can be recycled between check and signal.
#include <poll.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <thread>

#include "rldk/process.h"
#include "sys/pidfd.h"
#include "sys/proc_stat.h"
#include "sys/unique_fd.h"

namespace rldk {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

bool is_exited_state(char state) { return state == 'Z' || state == 'X'; }

// Sends signals to one identified process and tells when it has exited.
class ExternalTarget {
 public:
  explicit ExternalTarget(const ProcessIdentity& identity) : identity_(identity) {}

  // Binds to the process (a pidfd where possible). Returns the check made after binding.
  ProcessIdentity::Check bind() {
    int fd = sys::open_pidfd(identity_.pid);
    if (fd < 0 && errno == ESRCH) return ProcessIdentity::Check::exited;
    pidfd_.reset(fd);  // -1 when unavailable: fall back to checking /proc before each kill()
    return identity_.check();
  }

  // 0, ESRCH (it has exited or the pid was reused meanwhile), or another errno (EPERM).
  int send(int signal) {
    if (pidfd_) {
      if (sys::pidfd_signal(pidfd_.get(), signal) == 0) return 0;
      if (errno != ENOSYS) return errno;
      pidfd_.reset();  // the kernel has pidfd_open but not pidfd_send_signal: fall through
    }
    if (identity_.check() != ProcessIdentity::Check::same) return ESRCH;
    return ::kill(identity_.pid, signal) == 0 ? 0 : errno;
  }

  bool exited() const {
    if (pidfd_) {
      pollfd p{pidfd_.get(), POLLIN, 0};
      if (::poll(&p, 1, 0) > 0) return true;
    }
    return identity_.check() != ProcessIdentity::Check::same;  // a reused pid also means the original is gone
  }

  bool wait_until(Clock::time_point deadline, milliseconds interval) const {
    for (;;) {
      if (exited()) return true;
      auto now = Clock::now();
      if (now >= deadline) return false;
      auto step = std::min(std::chrono::duration_cast<milliseconds>(deadline - now) + milliseconds(1), interval);
      if (pidfd_) {
        pollfd p{pidfd_.get(), POLLIN, 0};
        ::poll(&p, 1, static_cast<int>(step.count()));
      } else {
        std::this_thread::sleep_for(step);
      }
    }
  }

 private:
  const ProcessIdentity& identity_;
  sys::UniqueFd pidfd_;
};

Error refused(const ProcessIdentity& identity, const std::string& why) {
  return Error{ErrorCode::invalid_argument, "not stopping " + identity.describe() + ": " + why, ""};
}

}  // namespace

Result<ProcessIdentity> ProcessIdentity::capture(pid_t pid) {
  if (pid <= 0) return Error{ErrorCode::invalid_argument, "a pid must be positive", std::to_string(pid)};
  auto stat = sys::read_proc_stat(pid);
  if (!stat) return Error{ErrorCode::not_found, "no such process", "pid " + std::to_string(pid)};
  if (is_exited_state(stat->state)) {
    return Error{ErrorCode::invalid_argument, "the process has already exited (zombie)", "pid " + std::to_string(pid)};
  }
  ProcessIdentity identity;
  identity.pid = pid;
  identity.start_ticks = stat->start_ticks;
  identity.comm = stat->comm;
  identity.cmdline = sys::read_cmdline(pid);
  return identity;
}

ProcessIdentity::Check ProcessIdentity::check() const {
  auto stat = sys::read_proc_stat(pid);
  if (!stat) return Check::exited;
  if (stat->start_ticks != start_ticks) return Check::replaced;
  return is_exited_state(stat->state) ? Check::exited : Check::same;
}

std::string ProcessIdentity::describe() const {
  return "pid " + std::to_string(pid) + " (" + (cmdline.empty() ? comm : cmdline) + ")";
}

Result<StopReport> terminate_external(const ProcessIdentity& identity, const StopOptions& options) {
  auto start = Clock::now();
  StopReport report;
  auto finish = [&]() {
    report.elapsed = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
    return report;
  };
  ExternalTarget target(identity);
  auto check = target.bind();
  if (check == ProcessIdentity::Check::replaced) {
    return refused(identity, "the pid now belongs to another process (its start time changed)");
  }
  if (check == ProcessIdentity::Check::exited) {
    report.already_exited = true;
    report.exited = true;
    return finish();
  }

  int rc = target.send(SIGTERM);
  if (rc == EPERM) return refused(identity, "not permitted to signal it (another user's process?)");
  if (rc == ESRCH) {
    report.already_exited = true;
    report.exited = true;
    return finish();
  }
  if (rc != 0) return refused(identity, std::string("cannot signal it: ") + std::strerror(rc));
  report.signals.push_back(SIGTERM);
  report.exited = target.wait_until(start + options.grace, options.check_interval);
  if (!report.exited) {
    rc = target.send(SIGKILL);
    if (rc == 0) report.signals.push_back(SIGKILL);
    report.exited = target.wait_until(Clock::now() + options.kill_wait, options.check_interval);
  }
  return finish();
}

Result<StopReport> terminate_external(const ProcessIdentity& identity, std::chrono::milliseconds grace) {
  StopOptions options;
  options.grace = grace;
  return terminate_external(identity, options);
}

}  // namespace rldk
