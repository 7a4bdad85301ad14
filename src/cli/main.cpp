// rldk: the RL Debug Kit command-line tool.
#include <cstdio>
#include <exception>

#include "commands.h"
#include "unknown_word.h"
#include "rldk/terminal_text.h"
#include "rldk/version.h"

int main(int argc, char** argv) {
  // Before anything is printed: text from logs reaches the terminal only through the escaping filter.
  rldk::install_terminal_guard();
  CLI::App app{"rldk: catch RL training failures of language models (PPO, GRPO, DPO) early, and explain them.\n"
               "Point it at a run: a JSONL/CSV log, trainer_state.json, a trainer's console output, or a folder."};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("rldk ") + rldk::VERSION);
  int exit_code = rldk::cli::EXIT_OK;
  rldk::cli::add_info_command(app, exit_code);
  rldk::cli::add_ingest_command(app, exit_code);
  rldk::cli::add_metrics_command(app, exit_code);
  rldk::cli::add_rules_command(app, exit_code);
  rldk::cli::add_monitor_command(app, exit_code);
  rldk::cli::add_scan_command(app, exit_code);
  rldk::cli::add_forensics_command(app, exit_code);
  rldk::cli::add_doctor_command(app, exit_code);
  rldk::cli::add_env_audit_command(app, exit_code);
  rldk::cli::add_seed_command(app, exit_code);
  rldk::cli::add_bisect_command(app, exit_code);
  rldk::cli::add_diff_command(app, exit_code);
  rldk::cli::add_check_determinism_command(app, exit_code);
  rldk::cli::add_replay_command(app, exit_code);
  rldk::cli::add_reward_command(app, exit_code);
  rldk::cli::add_evals_command(app, exit_code);
  rldk::cli::add_ckpt_command(app, exit_code);
  rldk::cli::add_track_command(app, exit_code);
  rldk::cli::add_lineage_command(app, exit_code);
  rldk::cli::add_card_command(app, exit_code);
  rldk::cli::add_emit_command(app, exit_code);
  rldk::cli::add_profile_command(app, exit_code);
  rldk::cli::add_reference_command(app, exit_code);
  rldk::cli::add_contamination_command(app, exit_code, argc, argv);
  rldk::cli::add_older_tool_commands(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // A word the parser did not know is named on one line with the nearest command or option, not buried in help.
    bool help_or_version = e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success);
    if (!help_or_version && rldk::cli::explain_unknown_word(app, argc, argv)) return rldk::cli::EXIT_INPUT_ERROR;
    int code = app.exit(e);
    return code == 0 ? rldk::cli::EXIT_OK : rldk::cli::EXIT_INPUT_ERROR;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rldk: internal error: %s\n", e.what());
    return rldk::cli::EXIT_INPUT_ERROR;
  }
  return exit_code;
}
