// Where the replicas of `check-determinism` and `replay` run, chosen the same way for both commands.
#pragma once

#include <stdlib.h>  // mkdtemp

#include <filesystem>
#include <optional>
#include <string>
#include <system_error>

namespace rldk::cli {

// --work-dir when given; else rldk's own subfolder of --out, emptied first so re-running with the same --out works;
// else a new temporary folder named from `temp_prefix`. Nothing when that folder cannot be created.
inline std::optional<std::string> replica_work_root(const std::string& work_dir, const std::string& out_dir,
                                                    const char* out_subfolder, const char* temp_prefix) {
  if (!work_dir.empty()) return work_dir;
  if (!out_dir.empty()) {
    std::string root = (std::filesystem::path(out_dir) / out_subfolder).string();
    std::error_code ec;
    std::filesystem::remove_all(root, ec);
    return root;
  }
  std::string pattern = (std::filesystem::temp_directory_path() / (std::string(temp_prefix) + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) return std::nullopt;
  return pattern;
}

}  // namespace rldk::cli
