// The checkpoint diff command's options and runner, shared by `rldk ckpt diff` and `rldk forensics diff-ckpt`.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace rldk::cli {

struct CkptDiffCliOptions {
  std::vector<std::string> checkpoints;  // A B
  std::string series;                    // RUN_DIR with checkpoint-*/ folders
  std::string baseline = "first";
  bool reference = false;                // A is the reference (initial/SFT) weights, B the trained policy
  std::string label_a, label_b;
  bool json = false;
  std::string out;
  size_t top = 20;
  unsigned threads = 0;
  double tolerance = 0;
  bool fail_on_change = false;
};

void add_ckpt_diff_options(CLI::App* cmd, const std::shared_ptr<CkptDiffCliOptions>& opts);
int run_ckpt_diff(const CkptDiffCliOptions& opts, const char* name);

}  // namespace rldk::cli
