// One run from a path, for the commands that compare runs.
#include <set>

#include "rldk/compare.h"

namespace rldk {

Result<Run> read_one_run(const std::string& path, const std::string& run_id, ReadOptions options) {
  auto runs = read_runs(path, options);
  if (!runs.ok()) return runs.error();
  std::vector<Run>& all = runs.value();
  if (!run_id.empty()) {
    std::vector<Run> picked;
    std::string ids;
    for (auto& r : all) {
      ids += (ids.empty() ? "" : ", ") + r.run_id;
      if (r.run_id == run_id) picked.push_back(std::move(r));
    }
    if (picked.empty()) {
      return Error{ErrorCode::invalid_argument, "no run with id '" + run_id + "' (runs found: " + ids + ")", path};
    }
    return merge_runs(std::move(picked));
  }
  std::set<std::string> files;
  for (const auto& r : all) files.insert(r.source.path);
  if (files.size() > 1) {
    std::string ids;
    for (const auto& r : all) ids += (ids.empty() ? "" : ", ") + r.run_id + " (" + r.source.path + ")";
    return Error{ErrorCode::invalid_argument,
                 "holds " + std::to_string(all.size()) + " runs in several files; name one file, or pick a run id: " +
                     ids,
                 path};
  }
  return merge_runs(std::move(all));
}

}  // namespace rldk
