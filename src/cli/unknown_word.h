// Names the word of a command line that was not understood (a command or an option), with the nearest known one.
#pragma once

#include <CLI/CLI.hpp>

namespace rldk::cli {

// Walks argv down the command tree the way the parser does. When it meets a word that is neither a subcommand
// nor an option of the command it is in, prints one line naming it and the nearest known word to stderr and
// returns true; returns false when every word is known (the parse error is about something else).
bool explain_unknown_word(const CLI::App& app, int argc, const char* const* argv);

}  // namespace rldk::cli
