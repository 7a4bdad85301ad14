// Text from a log (metric names, run ids, values, file names) is untrusted: an ESC or OSC sequence in it would
// reach the terminal and clear the screen, retitle the window or rewrite what was printed. The rldk command routes
// stdout and stderr through one filter, so no command, present or future, can print such bytes raw.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace rldk {

// Shows every byte a terminal would act on as a visible escape: C0 controls other than newline and tab (NUL, ESC,
// CR, BEL...) and DEL as \xNN; C1 controls (U+0080..U+009F) as \u0080..; bytes that are not valid UTF-8 as \xNN.
// Printable text, including all valid non-ASCII UTF-8, is unchanged.
std::string terminal_safe(std::string_view text);

// Streams the same escaping over text that arrives in pieces: a UTF-8 sequence split between two pieces is kept
// until its end arrives, so a character is never escaped just because a buffer boundary cut it.
class TerminalFilter {
 public:
  std::string feed(std::string_view piece);
  std::string finish();  // whatever incomplete sequence is left, escaped

 private:
  std::string carry_;
};

// Replaces the process's stdout and stderr with streams that pass everything through TerminalFilter to the
// original descriptors. Called once at the start of the rldk command, before anything is printed. Output that is
// not text from a log (a trainer's own console, which may draw progress bars) goes to raw_stdout()/raw_stderr().
void install_terminal_guard();
std::FILE* raw_stdout();
std::FILE* raw_stderr();

}  // namespace rldk
