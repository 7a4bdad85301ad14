// Each command registers its subcommand and options on the app; the callback stores the exit code.
// Exit codes (a contract): 0 ok, 1 findings at or above --fail-on, 2 usage or input error.
#pragma once

#include <CLI/CLI.hpp>

namespace rldk::cli {

inline constexpr int EXIT_OK = 0;
inline constexpr int EXIT_FINDINGS = 1;
inline constexpr int EXIT_INPUT_ERROR = 2;

void add_info_command(CLI::App& app, int& exit_code);
void add_ingest_command(CLI::App& app, int& exit_code);
void add_metrics_command(CLI::App& app, int& exit_code);
void add_rules_command(CLI::App& app, int& exit_code);
void add_monitor_command(CLI::App& app, int& exit_code);

}  // namespace rldk::cli
