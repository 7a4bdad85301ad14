// Command names of the older rldk that have no command of their own here. Each answers with one line: its status
// and what to run instead, exit 2, whatever arguments follow (they are the older tool's, copied from its docs).
// Hidden from --help (group ""), so the command list shows only what works.
#include <cstdio>

#include "commands.h"

namespace rldk::cli {
namespace {

struct OlderCommand {
  const char* name;
  const char* message;
};

constexpr OlderCommand OLDER_COMMANDS[] = {
    {"data-integrity",
     "replaced by content-hashed data lineage: `rldk lineage record DATA... -o lineage.json` once, then "
     "`rldk lineage verify lineage.json` names every file that changed (docs/provenance.md)"},
};

}  // namespace

void add_older_tool_commands(CLI::App& app, int& exit_code) {
  for (const OlderCommand& c : OLDER_COMMANDS) {
    CLI::App* cmd = app.add_subcommand(c.name, c.message);
    cmd->group("");
    cmd->allow_extras();
    cmd->prefix_command();  // every word after the name belongs to the older tool's syntax, not ours
    cmd->callback([&exit_code, c] {
      std::fprintf(stderr, "rldk %s: %s\n", c.name, c.message);
      exit_code = EXIT_INPUT_ERROR;
    });
  }
}

}  // namespace rldk::cli
