// The run diff command's options and runner, shared by `rldk diff`, `rldk forensics compare-runs` and
// `rldk card drift`.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "rldk/compare.h"

namespace rldk::cli {

struct DiffCliOptions {
  const char* me = "rldk diff";  // the command name in messages
  std::string a, b;
  std::string run_a, run_b;
  std::vector<std::string> signals;
  std::vector<std::string> noise_runs;
  bool json = false;
  bool gate = false;
  std::string out_dir;
  DivergenceOptions divergence;
};

void add_diff_options(CLI::App* cmd, const std::shared_ptr<DiffCliOptions>& opts);
int run_diff(const DiffCliOptions& opts);

}  // namespace rldk::cli
