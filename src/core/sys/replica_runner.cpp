// Runs N replicas of a training command in parallel, each in its own working directory with its own metrics file,
// output captured to files, and a wall-clock limit. Used by `rldk check-determinism` and `rldk replay`.
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include "rldk/determinism.h"

namespace rldk {
namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

// How long a loop iteration waits for output or an exit before checking timeouts again.
constexpr int POLL_MS = 50;
// A replica that has exited but whose pipes are still held open (a background grandchild) gets this long before its
// process group is stopped, so one stray process cannot hold the whole check until the timeout.
constexpr auto ORPHAN_OUTPUT_GRACE = std::chrono::seconds(2);

void keep_tail(std::string& tail, std::string_view bytes, size_t limit) {
  tail.append(bytes);
  if (tail.size() > 2 * limit) tail.erase(0, tail.size() - limit);
}

struct Active {
  ReplicaOutcome outcome;
  std::optional<ChildProcess> child;
  std::ofstream out, err;
  Clock::time_point started;
  std::optional<Clock::time_point> exited_at;
};

std::string format_seconds(double s) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f s", s);
  return buffer;
}

}  // namespace

std::string ReplicaOutcome::describe() const {
  if (!start_error.empty()) return "could not start: " + start_error;
  // No measured durations: reports stay byte-stable between runs (the `seconds` field has the time).
  if (timed_out) return "timed out (limit " + format_seconds(timeout_seconds) + ")";
  if (!status) return "did not finish";
  return status->describe();
}

Result<std::vector<ReplicaOutcome>> run_replicas(const ReplicaRunOptions& options) {
  if (options.command.empty()) return Error{ErrorCode::invalid_argument, "empty command", ""};
  if (options.replicas == 0) return Error{ErrorCode::invalid_argument, "at least one replica is needed", ""};
  size_t parallel = options.parallel;
  if (parallel == 0) parallel = std::max(1u, std::thread::hardware_concurrency());
  parallel = std::min(parallel, options.replicas);

  std::error_code ec;
  // Paths in reports stay as the caller gave them (stable, readable); the metrics path handed to the replica is
  // absolute, since the replica runs in its own folder.
  fs::path root = options.work_root.empty() ? fs::path("rldk-replicas") : fs::path(options.work_root);
  std::vector<ReplicaOutcome> done(options.replicas);
  for (size_t i = 0; i < options.replicas; ++i) {
    fs::path dir = root / ("replica_" + std::to_string(i));
    if (fs::exists(dir, ec) && !fs::is_empty(dir, ec)) {
      return Error{ErrorCode::invalid_argument,
                   "replica directory already holds files from an earlier check; use an empty work directory",
                   dir.string()};
    }
    fs::create_directories(dir, ec);
    if (ec) return Error{ErrorCode::io, "cannot create replica directory: " + ec.message(), dir.string()};
    ReplicaOutcome& o = done[i];
    o.index = i;
    o.work_dir = dir.string();
    o.metrics_path = fs::absolute(dir / options.metrics_file_name, ec).string();
    o.timeout_seconds = std::chrono::duration<double>(options.timeout).count();
    o.stdout_path = (dir / "stdout.log").string();
    o.stderr_path = (dir / "stderr.log").string();
  }

  std::vector<std::unique_ptr<Active>> active;
  size_t next = 0;
  auto finish = [&](Active& a) {
    a.outcome.seconds = std::chrono::duration<double>(Clock::now() - a.started).count();
    if (a.child && !a.outcome.status) a.outcome.status = a.child->status();
    a.out.close();
    a.err.close();
    done[a.outcome.index] = std::move(a.outcome);
  };

  while (next < options.replicas || !active.empty()) {
    while (next < options.replicas && active.size() < parallel) {
      auto a = std::make_unique<Active>();
      a->outcome = done[next];
      SpawnOptions spawn;
      spawn.working_directory = a->outcome.work_dir;
      spawn.environment = options.environment;
      spawn.environment.emplace_back("RLDK_METRICS_PATH", a->outcome.metrics_path);
      spawn.environment.emplace_back("RLDK_REPLICA_INDEX", std::to_string(next));
      a->out.open(a->outcome.stdout_path, std::ios::binary);
      a->err.open(a->outcome.stderr_path, std::ios::binary);
      a->started = Clock::now();
      auto child = ChildProcess::spawn(options.command, spawn);
      ++next;
      if (!child.ok()) {
        a->outcome.start_error = to_string(child.error());
        finish(*a);
        continue;
      }
      a->child.emplace(std::move(child.value()));
      active.push_back(std::move(a));
    }
    if (active.empty()) continue;

    std::vector<pollfd> fds;
    for (auto& a : active) {
      for (int fd : {a->child->stdout_fd(), a->child->stderr_fd(), a->child->exit_fd()}) {
        if (fd >= 0) fds.push_back({fd, POLLIN, 0});
      }
    }
    ::poll(fds.data(), fds.size(), POLL_MS);

    for (auto& a : active) {
      Active& r = *a;
      auto on_output = [&r, &options](OutputStream stream, std::string_view bytes) {
        if (stream == OutputStream::out) {
          r.out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
          keep_tail(r.outcome.stdout_tail, bytes, options.tail_bytes);
        } else {
          r.err.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
          keep_tail(r.outcome.stderr_tail, bytes, options.tail_bytes);
        }
      };
      while (r.child->read_output(on_output).more) {
      }
      auto now = Clock::now();
      if (!r.exited_at && r.child->try_wait()) r.exited_at = now;
      if (!r.exited_at && now - r.started > options.timeout) {
        StopReport stop = r.child->terminate(options.kill_grace, on_output);
        r.outcome.timed_out = true;
        r.outcome.status = stop.status;
        r.exited_at = now;
      } else if (r.exited_at && r.child->output_open() && now - *r.exited_at > ORPHAN_OUTPUT_GRACE) {
        r.child->terminate(options.kill_grace, on_output);
      }
    }
    for (auto it = active.begin(); it != active.end();) {
      Active& r = **it;
      if (r.exited_at && !r.child->output_open()) {
        for (auto& e : {&r.outcome.stdout_tail, &r.outcome.stderr_tail}) {
          if (e->size() > options.tail_bytes) e->erase(0, e->size() - options.tail_bytes);
        }
        finish(r);
        it = active.erase(it);
      } else {
        ++it;
      }
    }
  }
  return done;
}

std::vector<std::pair<std::string, std::string>> determinism_environment(std::optional<int64_t> seed, int threads) {
  std::string t = std::to_string(std::max(threads, 1));
  return {
      {"PYTHONHASHSEED", std::to_string(seed.value_or(0))},
      // cuBLAS picks a deterministic workspace only when this is set before CUDA initialises.
      {"CUBLAS_WORKSPACE_CONFIG", ":4096:8"},
      // Thread counts decide reduction order in CPU BLAS and OpenMP kernels.
      {"OMP_NUM_THREADS", t},
      {"MKL_NUM_THREADS", t},
      {"OPENBLAS_NUM_THREADS", t},
      {"NUMEXPR_NUM_THREADS", t},
      {"TOKENIZERS_PARALLELISM", "false"},
      // Unbuffered output, so a crash leaves its last lines in the captured logs.
      {"PYTHONUNBUFFERED", "1"},
  };
}

}  // namespace rldk
