// Reading /proc/PID/stat and /proc/PID/cmdline: process state, process group and start time, as the stop logic
// needs them to tell a live process from a zombie and from a later process that reuses the pid.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace rldk::sys {

struct ProcStat {
  std::string comm;          // field 2, without the parentheses
  char state = '?';          // field 3: R, S, D, Z (zombie), X (dead), T, t, I, ...
  pid_t process_group = 0;   // field 5
  uint64_t start_ticks = 0;  // field 22: clock ticks after boot
};

// nullopt when the process does not exist (or /proc cannot be read).
std::optional<ProcStat> read_proc_stat(pid_t pid);

// Parses the text of a stat file; exposed for tests (comm may hold spaces and parentheses).
std::optional<ProcStat> parse_proc_stat(const std::string& text);

// The arguments joined with single spaces; empty when unreadable or empty (kernel threads, zombies).
std::string read_cmdline(pid_t pid);

// Whether some process in `group` has not yet exited. Zombies do not count: an orphaned grandchild whose new
// parent never reaps it (an init process in a container that does not reap) stays a zombie forever.
bool group_has_live_member(pid_t group);

}  // namespace rldk::sys
