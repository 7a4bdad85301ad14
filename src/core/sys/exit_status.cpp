// Names and descriptions for exit statuses, signals and output streams, as messages and reports show them.
#include <csignal>
#include <cstring>
#include <string>

#include "rldk/process.h"

namespace rldk {

std::string signal_name(int signal) {
  const char* abbrev = ::sigabbrev_np(signal);  // "TERM"; nullptr for numbers without a name (real-time signals)
  return abbrev != nullptr ? std::string("SIG") + abbrev : "SIG" + std::to_string(signal);
}

std::string ExitStatus::describe() const {
  if (!signaled) return "exit code " + std::to_string(code);
  return "killed by " + signal_name(signal) + (core_dumped ? " (core dumped)" : "");
}

std::string_view output_stream_name(OutputStream stream) { return stream == OutputStream::out ? "stdout" : "stderr"; }

}  // namespace rldk
