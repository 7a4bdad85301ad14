// exec_form(): declared in rldk/process.h, where the reason for it is.
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <string>

#include "rldk/process.h"

namespace rldk {
namespace {

// End of the shell word starting at `i` (quotes and backslashes respected), or npos when a quote is unclosed.
size_t word_end(const std::string& s, size_t i) {
  char quote = 0;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (quote) {
      if (c == quote) quote = 0;
      else if (c == '\\' && quote == '"') ++i;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '\\') {
      ++i;
    } else if (c == ' ' || c == '\t') {
      return i;
    }
  }
  return quote ? std::string::npos : s.size();
}

bool is_assignment(const std::string& word) {
  if (word.empty() || !(std::isalpha(static_cast<unsigned char>(word[0])) || word[0] == '_')) return false;
  for (char c : word) {
    if (c == '=') return true;
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return false;
}

bool executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// A program the shell would find outside itself: a path, or a name on PATH. Builtins and keywords (exit, cd,
// export, if, ...) are not files, so they stay with the shell.
bool external_program(const std::string& word) {
  for (char c : word) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && std::string("_./+-@%,:").find(c) == std::string::npos) {
      return false;  // quoted or expanded: only the shell knows what it names
    }
  }
  if (word.find('/') != std::string::npos) return true;  // the shell would exec it too, or fail the same way
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  for (size_t start = 0; start <= dirs.size();) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = end > start ? dirs.substr(start, end - start) : ".";
    if (executable_file(dir + "/" + word)) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace

std::string exec_form(const std::string& command) {
  // Lists, pipelines, redirections, subshells, substitutions and multi-line scripts keep their shell.
  if (command.find_first_of(";&|<>()`\n") != std::string::npos) return command;
  size_t program = std::string::npos;  // where the first word that is no assignment starts
  for (size_t i = command.find_first_not_of(" \t"); i != std::string::npos;
       i = command.find_first_not_of(" \t", i)) {
    size_t end = word_end(command, i);
    if (end == std::string::npos) return command;  // an unclosed quote: the shell's own error, unchanged
    if (program == std::string::npos && !is_assignment(command.substr(i, end - i))) program = i;
    i = end;
  }
  if (program == std::string::npos) return command;  // only assignments
  size_t end = word_end(command, program);
  if (!external_program(command.substr(program, end - program))) return command;
  return command.substr(0, program) + "exec " + command.substr(program);
}

}  // namespace rldk
