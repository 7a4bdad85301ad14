#include "sys/proc_stat.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "sys/unique_fd.h"

namespace rldk::sys {
namespace {

// Position of the start time among the space-separated fields after the closing parenthesis of comm (field 3 is
// the first of them).
constexpr size_t FIRST_FIELD_AFTER_COMM = 3;
constexpr size_t PROCESS_GROUP_FIELD = 5;
constexpr size_t START_TIME_FIELD = 22;
// /proc/PID/stat is well under this; cmdline can be longer and is read in pieces.
constexpr size_t READ_PIECE = 4096;

std::optional<std::string> read_small_file(const std::string& path, size_t limit) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return std::nullopt;
  std::string text;
  char buffer[READ_PIECE];
  while (text.size() < limit) {
    ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      return std::nullopt;  // ESRCH: the process went away while reading
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  return text;
}

}  // namespace

std::optional<ProcStat> parse_proc_stat(const std::string& text) {
  size_t open = text.find('(');
  size_t close = text.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
  ProcStat stat;
  stat.comm = text.substr(open + 1, close - open - 1);
  size_t field = FIRST_FIELD_AFTER_COMM;
  size_t pos = close + 1;
  bool have_group = false, have_start = false;
  while (pos < text.size() && !(have_group && have_start)) {
    while (pos < text.size() && text[pos] == ' ') ++pos;
    size_t end = text.find(' ', pos);
    if (end == std::string::npos) end = text.size();
    if (end == pos) break;
    std::string token = text.substr(pos, end - pos);
    if (field == FIRST_FIELD_AFTER_COMM) stat.state = token[0];
    if (field == PROCESS_GROUP_FIELD) {
      stat.process_group = static_cast<pid_t>(std::strtol(token.c_str(), nullptr, 10));
      have_group = true;
    }
    if (field == START_TIME_FIELD) {
      stat.start_ticks = std::strtoull(token.c_str(), nullptr, 10);
      have_start = true;
    }
    ++field;
    pos = end;
  }
  if (!have_group || !have_start) return std::nullopt;
  return stat;
}

std::optional<ProcStat> read_proc_stat(pid_t pid) {
  if (pid <= 0) return std::nullopt;
  auto text = read_small_file("/proc/" + std::to_string(pid) + "/stat", READ_PIECE);
  if (!text) return std::nullopt;
  return parse_proc_stat(*text);
}

std::string read_cmdline(pid_t pid) {
  constexpr size_t CMDLINE_LIMIT = 16 * READ_PIECE;  // enough to recognise a command in a message
  auto text = read_small_file("/proc/" + std::to_string(pid) + "/cmdline", CMDLINE_LIMIT);
  if (!text) return "";
  while (!text->empty() && text->back() == '\0') text->pop_back();
  for (char& c : *text) {
    if (c == '\0') c = ' ';
  }
  return *text;
}

bool group_has_live_member(pid_t group) {
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return true;  // cannot tell: assume alive, so the caller keeps waiting / escalates
  bool alive = false;
  while (const dirent* entry = ::readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    auto stat = read_proc_stat(static_cast<pid_t>(pid));
    if (stat && stat->process_group == group && stat->state != 'Z' && stat->state != 'X') {
      alive = true;
      break;
    }
  }
  ::closedir(proc);
  return alive;
}

}  // namespace rldk::sys
