// The doctor command's options and runner, shared by `rldk doctor` and `rldk forensics doctor`.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

namespace rldk::cli {

inline constexpr const char* DOCTOR_HELP =
    "Diagnose a run: scan its log for training failures, audit the environment (Python, torch flags, seeding in the "
    "repository) and write a report card: DIR/doctor.json, doctor.md and doctor.html.";

struct DoctorOptions {
  const char* me = "rldk doctor";  // the command name in messages
  std::string source;
  std::string repo;
  std::string python;
  std::string out = "rldk_doctor";
  bool no_env = false;
  bool json = false;
  std::string fail_on = "critical";
};

void add_doctor_options(CLI::App* cmd, const std::shared_ptr<DoctorOptions>& opts);
int run_doctor(const DoctorOptions& opts);

}  // namespace rldk::cli
