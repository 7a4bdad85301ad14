// The scan command's options and runner, shared by `rldk scan`, its aliases and `rldk forensics log-scan`.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "rldk/scan.h"

namespace rldk::cli {

struct ScanCommandOptions {
  std::vector<std::string> sources;
  bool json = false;
  std::string out;
  std::string fail_on = "critical";
  std::vector<std::string> only, skip;
  unsigned threads = 0;  // files of a folder read and scanned at once; 0: one per core
  size_t plan_steps = ScanOptions{}.plan_steps;
};

// Registers the scan options on `cmd`.
CLI::App* add_scan_options(CLI::App* cmd, const std::shared_ptr<ScanCommandOptions>& opts);
// Runs the scan; `name` is the command name used in messages. Returns the exit code.
int run_scan_command(const ScanCommandOptions& opts, const char* name);

}  // namespace rldk::cli
