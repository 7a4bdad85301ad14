// RolloutFollower: per-step rollout metrics for `rldk monitor --rollouts`, computed by the reward health checks on
// one step's samples.
#include "rldk/rollout_metrics.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <utility>

#include "rldk/reward_health.h"

namespace rldk {
namespace fs = std::filesystem;
namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool sample_file(const fs::path& p) {
  std::string name = p.filename().string();
  for (std::string_view ext : {".parquet", ".jsonl", ".jsonl.gz", ".jsonl.zst", ".csv", ".tsv"}) {
    if (name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0) return true;
  }
  return false;
}

// The step a file's name carries (completions_00005.parquet, 12.jsonl); files without one sort last, by name.
std::pair<int64_t, std::string> order_of(const fs::path& p) {
  std::string name = p.filename().string();
  size_t end = name.find_last_of("0123456789");
  if (end == std::string::npos) return {INT64_MAX, name};
  size_t begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(name[begin - 1]))) --begin;
  if (end - begin >= 18) return {INT64_MAX, name};
  return {std::stoll(name.substr(begin, end - begin + 1)), name};
}

}  // namespace

RolloutFollower::RolloutFollower(std::string path, RolloutFollowOptions options)
    : path_(std::move(path)), options_(std::move(options)) {}

std::vector<RolloutMetric> RolloutFollower::poll(Diagnostics& diagnostics) {
  double now = now_seconds();
  if (now - last_scan_ < options_.rescan_seconds) return {};
  last_scan_ = now;
  return scan(true, diagnostics);
}
std::vector<RolloutMetric> RolloutFollower::finish(Diagnostics& diagnostics) { return scan(false, diagnostics); }

std::vector<RolloutMetric> RolloutFollower::scan(bool settled_only, Diagnostics& diagnostics) {
  std::error_code ec;
  fs::path dir(path_);
  if (fs::is_directory(dir / "completions", ec)) dir /= "completions";
  std::vector<std::pair<std::pair<int64_t, std::string>, std::string>> ready;
  double now = now_seconds();
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file(ec) || !sample_file(entry.path())) continue;
    std::string file = entry.path().string();
    if (done_.contains(file)) continue;
    uintmax_t size = entry.file_size(ec);
    int64_t mtime = entry.last_write_time(ec).time_since_epoch().count();
    auto [it, added] = pending_.try_emplace(file, Seen{size, mtime, now});
    if (!added && (it->second.size != size || it->second.mtime_ns != mtime)) it->second = Seen{size, mtime, now};
    if (settled_only && (added || now - it->second.stable_since < options_.settle_seconds)) continue;
    ready.push_back({order_of(entry.path()), file});
  }
  // A folder that does not exist yet is not an error: the trainer creates it at its first logging step.
  std::sort(ready.begin(), ready.end());
  std::vector<RolloutMetric> out;
  for (const auto& [order, file] : ready) {
    std::vector<RolloutMetric> m = metrics_of(file, diagnostics);
    out.insert(out.end(), m.begin(), m.end());
    pending_.erase(file);
    done_.insert(file);
  }
  return out;
}

std::vector<RolloutMetric> RolloutFollower::metrics_of(const std::string& file, Diagnostics& diagnostics) {
  RewardHealthAccumulator samples;
  Status read = read_samples(file, options_.read, samples, diagnostics);
  if (!read.ok()) {
    diagnostics.add(Diagnostic{"unreadable_file", file, 0, to_string(read.error()) + "; step skipped"});
    return {};
  }
  RewardHealthReport r = samples.finish(RewardHealthOptions{});
  std::vector<RolloutMetric> out;
  int64_t step = r.last_step;  // one file is one step
  for (size_t k = 0; k < r.columns.size(); ++k) {
    const RewardColumnHealth& c = r.columns[k];
    if (c.samples == 0) continue;
    std::string suffix = k == 0 ? "" : "/" + c.name;
    auto emit = [&](const char* name, double value) {
      if (std::isfinite(value)) out.push_back({step, std::string(name) + suffix, value});
    };
    emit("rollout/sampled_reward_mean", c.mean);
    emit("rollout/length_reward_corr", c.length_bias.within_spearman.r);
    emit("rollout/zero_variance_share", c.zero_variance_groups.observed_share);
    // Saturation against the declared range, else the range seen so far (this step included): a live run has no
    // "observed range" of its own yet, and one step's own extremes would always sit at its bounds.
    auto& range = observed_range_.try_emplace(c.name, c.min, c.max).first->second;
    range = {std::min(range.first, c.min), std::max(range.second, c.max)};
    RewardHealthOptions bounded;
    bounded.range_lo = options_.range_lo.value_or(range.first);
    bounded.range_hi = options_.range_hi.value_or(range.second);
    if (*bounded.range_lo < *bounded.range_hi) {
      RewardHealthReport at_bounds = samples.finish(bounded);
      const SaturationCheck& s = at_bounds.columns[k].saturation;
      emit("rollout/saturation_share", std::max(s.share_low, s.share_high));
    }
  }
  return out;
}

}  // namespace rldk
