// What RewardHealthAccumulator keeps of a sample stream, column by column, and the views the checks share: one
// reward column's finite values, step windows, and (step, group) groups. Internal to src/core/reward.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "reward/text_features.h"
#include "rldk/reward_health.h"
#include "stats/correlation.h"

namespace rldk {

// A kept example text: the highest rewards of one column survive in a bounded min-heap.
struct KeptExample {
  double reward = 0;
  uint32_t words = 0;
  size_t sample = 0;
  std::string text;  // cut to quote_chars
  bool truncated = false;
  std::string prompt;  // cut to quote_chars too: evidence reads better with the question it answers
  bool prompt_truncated = false;
};

struct RewardHealthAccumulator::State {
  size_t quote_chars = 0, kept_limit = 0;
  std::string format;
  bool has_gold = false, has_group = false, has_step = false;
  std::vector<std::string> reward_names;
  std::vector<size_t> schema_column;  // the current file's reward index -> column in reward_names

  // One entry per sample.
  std::vector<int64_t> step;
  std::vector<uint64_t> group_hash, prompt_hash;
  std::vector<uint32_t> chars, words;
  std::vector<float> repetition;      // float: a share in [0, 1] needs no more
  std::vector<double> gold;           // NaN when absent
  std::vector<uint32_t> source;       // index into sources
  std::vector<uint64_t> row;
  std::vector<std::vector<double>> rewards;  // [column][sample], NaN when absent
  // Shortcut features, row-major: features[sample * feature_names.size() + f]. Float: counts and shares need no
  // more, and the row stays 4 bytes per feature.
  std::vector<std::string> feature_names;    // BUILTIN_FEATURES, then the phrase features
  std::vector<float> features;
  reward::PhraseMatcher matcher;

  std::vector<std::string> sources;
  std::vector<std::vector<KeptExample>> kept;  // [column], heap with the lowest (reward, words) on top

  // Preference pairs: per pair the score margin (first - second; NaN when a score is missing) and the label.
  std::string pair_format;
  std::vector<double> pair_margin;
  std::vector<float> pair_label;
  std::vector<MiscalibratedPair> wrong;  // heap of the most confidently wrong pairs, the least confident on top  // [column], heap with the lowest (reward, words) on top
  std::vector<uint64_t> hash_scratch;
};

namespace reward {

// One reward column's samples with a finite value, in arrival order, and its GRPO groups.
struct ColumnData {
  std::vector<size_t> sample;  // index into the State vectors
  std::vector<double> value;
  // The (step, group) groups of at least two samples, as positions into sample/value: computed once here, since
  // most checks work within groups.
  std::vector<std::vector<size_t>> groups;
};
ColumnData column_data(const RewardHealthAccumulator::State& state, size_t column);

// The distinct steps in order, and step windows as shares of them: early = the first max(1, round(share x S))
// steps, late = the last as many.
struct StepWindows {
  std::vector<int64_t> steps;
  int64_t early_last(double share) const;
  int64_t late_first(double share) const;
};
StepWindows step_windows(std::span<const int64_t> steps);


// Checks, one file each (their formulas are in docs/reward.md).
SaturationCheck check_saturation(const ColumnData& column, const RewardHealthAccumulator::State& state,
                                 const StepWindows& windows, const RewardHealthOptions& options);
ZeroVarianceCheck check_zero_variance(const ColumnData& column, const RewardHealthAccumulator::State& state,
                                      const RewardHealthThresholds& thresholds);
LengthBiasCheck check_length_bias(const ColumnData& column, const RewardHealthAccumulator::State& state,
                                  const StepWindows& windows, const RewardHealthThresholds& thresholds);
DriftCheck check_drift(const ColumnData& column, const RewardHealthAccumulator::State& state,
                       const StepWindows& windows, const RewardHealthThresholds& thresholds);
GoldCheck check_gold(const ColumnData& column, const RewardHealthAccumulator::State& state,
                     const RewardHealthOptions& options);
CalibrationCheck check_calibration(const RewardHealthAccumulator::State& state,
                                   const RewardHealthThresholds& thresholds);
SuspiciousCheck check_suspicious(const ColumnData& column, const RewardHealthAccumulator::State& state, size_t column_index,
                                 const RewardHealthThresholds& thresholds);
ShortcutFeaturesCheck check_shortcut_features(const ColumnData& column, const RewardHealthAccumulator::State& state,
                                              size_t column_index, const RewardHealthThresholds& thresholds);

// The card's descriptive profiles (profiles.cpp).
std::vector<StepDistribution> step_distribution(const ColumnData& column, const RewardHealthAccumulator::State& state);
std::vector<LengthBin> length_profile(const ColumnData& column, const RewardHealthAccumulator::State& state,
                                      size_t bins);

// The kept example text of a sample, or null when it fell out of the bounded set.
const KeptExample* kept_example(const RewardHealthAccumulator::State& state, size_t column_index, size_t sample);

// Helpers the checks share.
CorrelationEstimate estimate_of(const stats::Correlation& c);
std::string format_number(double v, int digits = 3);  // "%.*g"; "n/a" for NaN

}  // namespace reward
}  // namespace rldk
