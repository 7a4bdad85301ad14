// Each command registers its subcommand and options on the app; the callback stores the exit code.
// Exit codes (a contract): 0 ok, 1 findings at or above --fail-on, 2 usage or input error.
#pragma once

#include <CLI/CLI.hpp>

namespace rldk::cli {

inline constexpr int EXIT_OK = 0;
inline constexpr int EXIT_FINDINGS = 1;
inline constexpr int EXIT_INPUT_ERROR = 2;

// CLI11's NonNegativeNumber, PositiveNumber and Range let NaN through (every comparison with NaN is false), and
// infinity too. Every numeric option is checked with one of these instead; CLI11 names the option on failure.
const CLI::Validator& FiniteNonNegative();
const CLI::Validator& FinitePositive();

void add_info_command(CLI::App& app, int& exit_code);
void add_ingest_command(CLI::App& app, int& exit_code);
void add_metrics_command(CLI::App& app, int& exit_code);
void add_rules_command(CLI::App& app, int& exit_code);
void add_monitor_command(CLI::App& app, int& exit_code);
void add_scan_command(CLI::App& app, int& exit_code);
void add_forensics_command(CLI::App& app, int& exit_code);
void add_doctor_command(CLI::App& app, int& exit_code);
void add_env_audit_command(CLI::App& app, int& exit_code);
// env-audit under `parent` (also `rldk forensics env-audit`); `alias` gives it the one-line "same as" help.
void add_env_audit_subcommand(CLI::App& parent, int& exit_code, bool alias);
void add_seed_command(CLI::App& app, int& exit_code);
void add_bisect_command(CLI::App& app, int& exit_code);
void add_diff_command(CLI::App& app, int& exit_code);
void add_check_determinism_command(CLI::App& app, int& exit_code);
void add_replay_command(CLI::App& app, int& exit_code);
void add_reward_command(CLI::App& app, int& exit_code);
void add_evals_command(CLI::App& app, int& exit_code);
void add_ckpt_command(CLI::App& app, int& exit_code);
void add_track_command(CLI::App& app, int& exit_code);
void add_lineage_command(CLI::App& app, int& exit_code);
void add_card_command(CLI::App& app, int& exit_code);
void add_emit_command(CLI::App& app, int& exit_code);
void add_profile_command(CLI::App& app, int& exit_code);
void add_reference_command(CLI::App& app, int& exit_code);
// `--ray` re-runs the command line under Python, so the command keeps argv.
void add_contamination_command(CLI::App& app, int& exit_code, int argc, char** argv);
// The older tool's command names that map onto no command of ours: one line with their status and replacement.
void add_older_tool_commands(CLI::App& app, int& exit_code);

}  // namespace rldk::cli
