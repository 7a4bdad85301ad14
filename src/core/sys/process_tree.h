// What a launched trainer uses, summed over its process tree (the trainer and every descendant: dataloader
// workers, launched ranks), read from /proc. `rldk monitor --cmd` samples it every few seconds as sys/* metrics, so
// a host-memory leak shows even when the trainer logs no memory metric.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace rldk::sys {

struct ProcessTreeSample {
  uint64_t rss_bytes = 0;     // resident memory, summed (shared pages counted once per process, as ps does)
  double cpu_seconds = 0;     // user + system CPU time used so far by the live processes
  uint64_t open_files = 0;    // entries in /proc/PID/fd
  uint64_t processes = 0;
  std::vector<pid_t> pids;    // the processes of the tree, root first
};

// nullopt when `root` no longer exists.
std::optional<ProcessTreeSample> sample_process_tree(pid_t root);

}  // namespace rldk::sys
