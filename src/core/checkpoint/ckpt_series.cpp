// A run's checkpoints as a drift curve: checkpoint-<step>/ folders (the Hugging Face Trainer's naming), sorted by step,
// each compared with the first (distance travelled from the start: the policy vs its initial weights) or with the one
// before it (how much each interval moved). Only two checkpoints are mapped at any time.
#include <algorithm>
#include <filesystem>

#include "rldk/checkpoint.h"

namespace rldk::ckpt {
namespace fs = std::filesystem;

Result<SeriesDiff> diff_series(const std::string& run_dir, const std::string& baseline, const DiffOptions& options) {
  if (baseline != "first" && baseline != "previous") {
    return Error{ErrorCode::invalid_argument, "baseline must be first or previous, got '" + baseline + "'", run_dir};
  }
  std::error_code ec;
  if (!fs::is_directory(run_dir, ec)) return Error{ErrorCode::not_found, "not a folder", run_dir};
  std::vector<std::pair<int64_t, std::string>> found;
  for (const auto& e : fs::directory_iterator(run_dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind("checkpoint-", 0) != 0 || !e.is_directory(ec)) continue;
    std::string digits = name.substr(11);
    if (digits.empty() || digits.size() > 18 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      continue;
    }
    found.emplace_back(std::stoll(digits), e.path().string());
  }
  if (ec) return Error{ErrorCode::unreadable, ec.message(), run_dir};
  std::sort(found.begin(), found.end());
  if (found.size() < 2) {
    return Error{ErrorCode::unrecognized,
                 "a series needs at least two checkpoint-<step>/ folders, found " + std::to_string(found.size()), run_dir};
  }
  SeriesDiff series;
  series.run_dir = run_dir;
  series.baseline = baseline;
  for (const auto& [step, path] : found) {
    series.steps.push_back(step);
    series.checkpoints.push_back(path);
  }
  auto base = read_checkpoint(found[0].second);
  if (!base.ok()) return base.error();
  Checkpoint reference = std::move(base.value());
  for (size_t k = 1; k < found.size(); ++k) {
    auto next = read_checkpoint(found[k].second);
    if (!next.ok()) return next.error();
    DiffOptions o = options;
    o.label_a = "checkpoint-" + std::to_string(baseline == "first" ? found[0].first : found[k - 1].first);
    o.label_b = "checkpoint-" + std::to_string(found[k].first);
    SeriesPoint point;
    point.path = found[k].second;
    point.step = found[k].first;
    point.diff = diff_checkpoints(reference, next.value(), o);
    series.points.push_back(std::move(point));
    if (baseline == "previous") reference = std::move(next.value());
  }
  return series;
}

}  // namespace rldk::ckpt
