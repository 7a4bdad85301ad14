// RolloutFollower: per-step rollout metrics for `rldk monitor --rollouts`, computed by the reward health checks on
// one step's samples.
#include "rldk/rollout_metrics.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <utility>

#include "rldk/reward_health.h"
#include "samples/cell_sink.h"

namespace rldk {
namespace fs = std::filesystem;
namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
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
    if (!entry.is_regular_file(ec) || !samples::sample_file_name(entry.path())) continue;
    std::string file = entry.path().string();
    if (done_.contains(file)) continue;
    uintmax_t size = entry.file_size(ec);
    int64_t mtime = entry.last_write_time(ec).time_since_epoch().count();
    auto [it, added] = pending_.try_emplace(file, Seen{size, mtime, now});
    if (!added && (it->second.size != size || it->second.mtime_ns != mtime)) it->second = Seen{size, mtime, now};
    if (settled_only && (added || now - it->second.stable_since < options_.settle_seconds)) continue;
    // Step order; files without a step in their name last, by name.
    std::string name = entry.path().filename().string();
    ready.push_back({{samples::step_from_file_name(name).value_or(INT64_MAX), name}, file});
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
