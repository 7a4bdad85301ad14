// SignalForwarder: passes the monitor's SIGINT/SIGTERM on to the child's process group.
//
// The handler may only use async-signal-safe calls (kill, write) and lock-free atomics, so the state it reads is
// process-wide: one forwarder at a time.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "rldk/process.h"

namespace rldk {
namespace {

std::atomic<pid_t> g_group{0};
std::atomic<int> g_write_fd{-1};
int g_read_fd = -1;
std::atomic<bool> g_installed{false};
struct sigaction g_previous[NSIG];

static_assert(std::atomic<pid_t>::is_always_lock_free && std::atomic<int>::is_always_lock_free,
              "the signal handler needs lock-free atomics");

extern "C" void forward_signal(int signal) {
  int saved_errno = errno;
  pid_t group = g_group.load(std::memory_order_relaxed);
  if (group > 0) ::kill(-group, signal);
  int fd = g_write_fd.load(std::memory_order_relaxed);
  if (fd >= 0) {
    auto byte = static_cast<unsigned char>(signal);
    [[maybe_unused]] ssize_t n = ::write(fd, &byte, 1);  // a full pipe drops the record; the signal was forwarded
  }
  errno = saved_errno;
}

}  // namespace

std::vector<int> SignalForwarder::default_signals() { return {SIGINT, SIGTERM}; }

Result<std::unique_ptr<SignalForwarder>> SignalForwarder::install(pid_t process_group,
                                                                   const std::vector<int>& signals) {
  if (process_group <= 0) return Error{ErrorCode::invalid_argument, "a process group must be positive", ""};
  for (int s : signals) {
    if (s <= 0 || s >= NSIG || s == SIGKILL || s == SIGSTOP) {
      return Error{ErrorCode::invalid_argument, "cannot forward signal " + std::to_string(s), ""};
    }
  }
  if (g_installed.exchange(true)) {
    return Error{ErrorCode::invalid_argument, "a signal forwarder is already installed", ""};
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    g_installed = false;
    return Error{ErrorCode::io, std::string("cannot create a pipe: ") + std::strerror(errno), ""};
  }
  g_read_fd = fds[0];
  g_write_fd = fds[1];
  g_group = process_group;
  std::unique_ptr<SignalForwarder> forwarder(new SignalForwarder());
  forwarder->signals_ = signals;
  struct sigaction action {};
  action.sa_handler = forward_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int s : signals) ::sigaction(s, &action, &g_previous[s]);
  return forwarder;
}

SignalForwarder::~SignalForwarder() {
  for (int s : signals_) ::sigaction(s, &g_previous[s], nullptr);
  g_group = 0;
  int fd = g_write_fd.exchange(-1);
  if (fd >= 0) ::close(fd);
  if (g_read_fd >= 0) ::close(g_read_fd);
  g_read_fd = -1;
  g_installed = false;
}

int SignalForwarder::poll_fd() const { return g_read_fd; }

std::vector<int> SignalForwarder::take() {
  std::vector<int> received;
  unsigned char buffer[64];
  for (;;) {
    ssize_t n = ::read(g_read_fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) received.push_back(buffer[i]);
  }
  return received;
}

}  // namespace rldk
