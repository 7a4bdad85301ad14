// Rollout metrics while training runs: `rldk monitor --rollouts DIR` follows a folder of per-step sample files
// (TRL's completions/completions_NNNNN.parquet, verl's rollout_data_dir/{step}.jsonl) and turns each new step into
// metrics that guard rules can fire on: how much the reward pays for length within a group, the share of samples at
// the reward's bounds, the share of GRPO groups with no reward spread. They come from the same checks as
// `rldk reward health` (rldk/reward_health.h), run on that one step.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "rldk/diagnostics.h"
#include "rldk/result.h"
#include "rldk/samples.h"

namespace rldk {

// One value of one rollout metric at one step. Names (data/metrics.yaml): rollout/sampled_reward_mean,
// rollout/length_reward_corr, rollout/saturation_share, rollout/zero_variance_share. With several reward columns,
// the metric of each column but the first is suffixed with "/COLUMN".
struct RolloutMetric {
  int64_t step = 0;
  std::string name;
  double value = 0;
};

struct RolloutFollowOptions {
  SampleReadOptions read;
  // The reward's declared range; absent: the range observed over the steps read so far.
  std::optional<double> range_lo, range_hi;
  // A file is read once its size and modification time stayed the same over this long: trainers write a step's
  // file in pieces, and a Parquet file without its footer is not yet a file.
  double settle_seconds = 1.0;
  // poll() lists the folder at most this often (the monitor's loop turns every 100 ms).
  double rescan_seconds = 0.5;
};

// Watches one folder (or a trainer's output folder holding completions/). poll() reads the files that appeared and
// settled since the last call, in step order, and returns their metrics; finish() reads the rest without waiting.
class RolloutFollower {
 public:
  RolloutFollower(std::string path, RolloutFollowOptions options);

  std::vector<RolloutMetric> poll(Diagnostics& diagnostics);
  std::vector<RolloutMetric> finish(Diagnostics& diagnostics);
  const std::string& path() const { return path_; }

 private:
  std::vector<RolloutMetric> scan(bool settled_only, Diagnostics& diagnostics);
  std::vector<RolloutMetric> metrics_of(const std::string& file, Diagnostics& diagnostics);

  struct Seen {
    uintmax_t size = 0;
    int64_t mtime_ns = 0;
    double stable_since = 0;  // steady-clock seconds when size and mtime were last seen to change
  };
  std::string path_;
  RolloutFollowOptions options_;
  std::map<std::string, Seen> pending_;
  std::set<std::string> done_;
  std::map<std::string, std::pair<double, double>> observed_range_;  // per reward column
  double last_scan_ = -1e300;
};

}  // namespace rldk
