#include "sys/process_tree.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace rldk::sys {
namespace {

struct ProcUsage {
  pid_t parent = 0;
  uint64_t rss_pages = 0;
  uint64_t cpu_ticks = 0;
};

// Fields of /proc/PID/stat after the command name (which may hold spaces, so it is skipped to the last ')'):
// 4 ppid, 14 utime, 15 stime, 24 rss (pages). Counted from field 3 (state) = index 0 here.
constexpr size_t PPID_INDEX = 4 - 3;
constexpr size_t UTIME_INDEX = 14 - 3;
constexpr size_t STIME_INDEX = 15 - 3;
constexpr size_t RSS_INDEX = 24 - 3;

std::optional<ProcUsage> read_usage(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!in || !std::getline(in, text)) return std::nullopt;
  size_t close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(close + 1));
  std::vector<std::string> f;
  for (std::string token; fields >> token && f.size() <= RSS_INDEX;) f.push_back(token);
  if (f.size() <= RSS_INDEX) return std::nullopt;
  ProcUsage u;
  u.parent = static_cast<pid_t>(std::strtol(f[PPID_INDEX].c_str(), nullptr, 10));
  u.cpu_ticks = std::strtoull(f[UTIME_INDEX].c_str(), nullptr, 10) + std::strtoull(f[STIME_INDEX].c_str(), nullptr, 10);
  u.rss_pages = std::strtoull(f[RSS_INDEX].c_str(), nullptr, 10);
  return u;
}

uint64_t count_open_files(pid_t pid) {
  DIR* dir = ::opendir(("/proc/" + std::to_string(pid) + "/fd").c_str());
  if (dir == nullptr) return 0;  // another user's process, or gone
  uint64_t n = 0;
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] != '.') ++n;
  }
  ::closedir(dir);
  return n;
}

}  // namespace

std::optional<ProcessTreeSample> sample_process_tree(pid_t root) {
  auto root_usage = read_usage(root);
  if (!root_usage) return std::nullopt;
  // One pass over /proc gives every process's parent; the tree is the root and whatever descends from it.
  std::map<pid_t, ProcUsage> all;
  if (DIR* proc = ::opendir("/proc")) {
    while (const dirent* e = ::readdir(proc)) {
      char* end = nullptr;
      long pid = std::strtol(e->d_name, &end, 10);
      if (end == e->d_name || *end != '\0' || pid <= 0) continue;
      if (auto u = read_usage(static_cast<pid_t>(pid))) all[static_cast<pid_t>(pid)] = *u;
    }
    ::closedir(proc);
  }
  all[root] = *root_usage;
  std::multimap<pid_t, pid_t> children;
  for (const auto& [pid, u] : all) children.emplace(u.parent, pid);
  static const long page = ::sysconf(_SC_PAGESIZE);
  static const long ticks = ::sysconf(_SC_CLK_TCK);
  ProcessTreeSample sample;
  std::vector<pid_t> pending{root};
  while (!pending.empty()) {
    pid_t pid = pending.back();
    pending.pop_back();
    const ProcUsage& u = all[pid];
    sample.rss_bytes += u.rss_pages * static_cast<uint64_t>(page > 0 ? page : 4096);
    sample.cpu_seconds += static_cast<double>(u.cpu_ticks) / static_cast<double>(ticks > 0 ? ticks : 100);
    sample.open_files += count_open_files(pid);
    ++sample.processes;
    sample.pids.push_back(pid);
    auto [first, last] = children.equal_range(pid);
    for (auto it = first; it != last; ++it) {
      if (it->second != pid) pending.push_back(it->second);
    }
  }
  return sample;
}

}  // namespace rldk::sys
