// Replay: re-run a recorded run's training command with the run's seed and check the re-run reproduces it, step by
// step within a tolerance. The seed comes from a flag, the run's metadata (`seed`) or a logged `seed` value.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rldk/determinism.h"
#include "rldk/json.h"
#include "rldk/result.h"
#include "rldk/run.h"

namespace rldk {

inline constexpr const char* REPLAY_SCHEMA = "rldk.replay/v1";

struct SeedLookup {
  int64_t seed = 0;
  std::string source;  // "flag", "metadata", "logged value"
};

// The run's seed: metadata key `seed`, else the first finite value of a metric named `seed`. Errors:
// invalid_argument when the run records none (pass --seed) or it is not an integer.
Result<SeedLookup> find_run_seed(const Run& run);

// Replaces every `{seed}` in the command. Errors: invalid_argument when there is no placeholder (the replay would
// not use the seed).
Result<std::string> substitute_seed(const std::string& command, int64_t seed);

struct ReplayReport {
  std::string original_path;
  std::string command;  // as run, seed substituted
  SeedLookup seed;
  ReplicaOutcome outcome;
  std::vector<std::string> errors;  // the re-run failed or logged nothing, nothing in common to compare
  ReplicaCompareOptions compare;
  ReplicaComparison comparison;  // original = reference, replay = replica 1, common steps only
  uint64_t steps_only_original = 0, steps_only_replay = 0;  // over the compared metrics

  std::string verdict() const;  // "pass" (reproduced), "fail", "error"
};

Json replay_json(const ReplayReport& report);
std::string replay_text(const ReplayReport& report);
std::string replay_markdown(const ReplayReport& report);

}  // namespace rldk
