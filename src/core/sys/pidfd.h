// pidfds (Linux 5.3+): a descriptor bound to one process, so signals sent through it can never reach a later
// process that reuses the pid, and poll(2) on it reports the process's exit. Called through syscall(2) so the
// build does not depend on the C library's wrappers; callers fall back when the kernel (or a seccomp filter in a
// container) refuses them.
#pragma once

#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

namespace rldk::sys {

// A pidfd for `pid`, or -1 with errno set (ESRCH: no such process; ENOSYS/EPERM: unavailable). Close-on-exec.
inline int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

// 0, or -1 with errno set (ESRCH: the process has exited).
inline int pidfd_signal(int pidfd, int signal) {
#ifdef SYS_pidfd_send_signal
  return static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd, signal, nullptr, 0));
#else
  (void)pidfd;
  (void)signal;
  errno = ENOSYS;
  return -1;
#endif
}

}  // namespace rldk::sys
