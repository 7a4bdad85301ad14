// Runs a short command to completion and captures its output: the probe of the env audit and the git calls of
// bisect. Output beyond a cap is dropped (counted), so a chatty command cannot exhaust memory.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "rldk/process.h"
#include "rldk/result.h"

namespace rldk::sys {

struct CaptureOptions {
  std::chrono::milliseconds timeout{60'000};  // then the command's process group is stopped
  size_t max_output_bytes = size_t{16} << 20;  // per stream
  std::vector<std::pair<std::string, std::string>> environment;
  std::string working_directory;
  // Forward SIGINT/SIGTERM that this process receives to the command's process group (the command runs in its
  // own group, so a Ctrl-C would otherwise reach only us) and stop waiting for it.
  bool forward_signals = false;
};

struct Captured {
  ExitStatus status;
  bool timed_out = false;
  bool interrupted = false;  // forward_signals: a signal arrived and the command was stopped
  std::string out;
  std::string err;
  size_t dropped_bytes = 0;
};

// Errors: those of ChildProcess::spawn (the shell or working directory is missing, no processes left).
Result<Captured> run_capture(const std::string& command_line, const CaptureOptions& options = {});
// The same for a program and its arguments, with no shell in between (ChildProcess::spawn_program).
Result<Captured> run_capture(const std::vector<std::string>& argv, const CaptureOptions& options = {});

// Quotes `word` for /bin/sh: single quotes, with embedded single quotes closed, escaped and reopened.
std::string shell_quote(const std::string& word);

}  // namespace rldk::sys
