// run_capture: poll a child's pipes until it exits and its output ends, or until the deadline.
#include "run_capture.h"

#include <poll.h>

#include <memory>

namespace rldk::sys {
namespace {

constexpr int POLL_MS = 50;  // also the latency of noticing an exit whose pipes a grandchild keeps open

void append_capped(std::string& to, std::string_view bytes, size_t cap, size_t& dropped) {
  size_t room = to.size() < cap ? cap - to.size() : 0;
  size_t take = bytes.size() < room ? bytes.size() : room;
  to.append(bytes.data(), take);
  dropped += bytes.size() - take;
}

}  // namespace

std::string shell_quote(const std::string& word) {
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  quoted += "'";
  return quoted;
}

namespace {

SpawnOptions spawn_options(const CaptureOptions& options) {
  SpawnOptions spawn;
  spawn.environment = options.environment;
  spawn.working_directory = options.working_directory;
  spawn.stop.grace = std::chrono::milliseconds{2'000};
  return spawn;
}

Result<Captured> capture(Result<ChildProcess> child, const CaptureOptions& options) {
  if (!child.ok()) return child.error();
  Captured captured;
  auto on_output = [&](OutputStream stream, std::string_view bytes) {
    append_capped(stream == OutputStream::out ? captured.out : captured.err, bytes, options.max_output_bytes,
                  captured.dropped_bytes);
  };
  std::unique_ptr<SignalForwarder> forwarder;
  if (options.forward_signals) {
    if (auto installed = SignalForwarder::install(child->pid()); installed.ok()) forwarder = std::move(installed.value());
  }
  auto deadline = std::chrono::steady_clock::now() + options.timeout;
  bool exited = false;
  while (true) {
    while (child->read_output(on_output).more) {
    }
    if (!exited && child->try_wait()) exited = true;
    if (exited && !child->output_open()) break;
    bool signalled = forwarder && !forwarder->take().empty();
    if (signalled || std::chrono::steady_clock::now() >= deadline) {
      StopReport report = child->terminate(on_output);
      (signalled ? captured.interrupted : captured.timed_out) = true;
      if (report.status) captured.status = *report.status;
      return captured;
    }
    pollfd fds[3] = {{child->stdout_fd(), POLLIN, 0}, {child->stderr_fd(), POLLIN, 0},
                     {forwarder ? forwarder->poll_fd() : -1, POLLIN, 0}};
    ::poll(fds, 3, POLL_MS);
    if (exited && child->output_open()) {
      // The command exited but something it started still holds the pipes: do not wait for that past a moment.
      child->read_output(on_output);
      break;
    }
  }
  captured.status = *child->status();
  return captured;
}

}  // namespace

Result<Captured> run_capture(const std::string& command_line, const CaptureOptions& options) {
  return capture(ChildProcess::spawn(command_line, spawn_options(options)), options);
}

Result<Captured> run_capture(const std::vector<std::string>& argv, const CaptureOptions& options) {
  return capture(ChildProcess::spawn_program(argv, spawn_options(options)), options);
}

}  // namespace rldk::sys
