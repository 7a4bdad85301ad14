// `rldk reward drift A B`: do two reward models (or two versions of one) agree on the same samples?
//
// The scores are paired (the same prompt and completion scored twice), so every statistic here is a paired one:
// correlations overall and after centring each prompt's scores (reward models are shift-invariant per prompt, the
// practical analogue of EPIC's canonicalisation, methods.md §3.7), pairwise ranking agreement on same-prompt pairs,
// the scale/offset fit (relative temperature), the mean difference with a paired bootstrap interval and a paired t
// test, per-slice differences, and the samples the two disagree on most. The older tool's fields (drift magnitude,
// z-score MAE, sign disagreement) are kept for comparison; its independent-samples interval is not (docs/reward.md).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "rldk/json.h"
#include "rldk/result.h"
#include "rldk/samples.h"
#include "rldk/reward_health.h"  // CorrelationEstimate

namespace rldk {

inline constexpr const char* REWARD_DRIFT_SCHEMA = "rldk.reward-drift/v1";

struct RewardDriftOptions {
  SampleReadOptions read_a, read_b;  // columns of each side; the first reward column is the score
  std::vector<std::pair<std::string, std::string>> slices;  // name, ECMAScript regex searched in the prompt
  uint64_t seed = 0;                 // of the bootstrap
  size_t bootstrap = 2000;           // resamples of the paired mean difference
  double confidence = 0.95;
  size_t examples = 5;               // most disagreeing samples quoted
};

struct RewardDriftSlice {
  std::string name, pattern;
  size_t n = 0;
  double mean_difference = NO_VALUE, ci_low = NO_VALUE, ci_high = NO_VALUE;
};

struct RewardDriftExample {
  std::string prompt, completion;    // cut to 200 characters
  double a = NO_VALUE, b = NO_VALUE, z_a = NO_VALUE, z_b = NO_VALUE;
};

// Mean B over one equal-count bin of A's scores: the drift card's B-against-A profile.
struct RewardDriftBin {
  size_t n = 0;
  double a_mean = NO_VALUE, b_mean = NO_VALUE;
};

struct RewardDriftReport {
  std::string column_a, column_b, format_a, format_b;
  size_t rows_a = 0, rows_b = 0, paired = 0;
  size_t unpaired_a = 0, unpaired_b = 0;  // samples found on one side only (matched by prompt and completion)
  size_t prompts = 0, prompt_groups = 0;  // prompt groups: prompts with at least 2 paired samples
  double mean_a = NO_VALUE, mean_b = NO_VALUE;
  CorrelationEstimate pearson, spearman;                 // raw scores
  CorrelationEstimate within_pearson, within_spearman;   // after centring both on each prompt's mean
  std::string within_reason;
  // Same-prompt pairs of samples: do A and B order them the same way?
  size_t pairs = 0, pairs_tied = 0;  // tied: equal under A or under B
  double ranking_agreement = NO_VALUE, sign_flip_rate = NO_VALUE;
  // Kendall's tau-b over the same-prompt pairs pooled across prompts: (C - D) / sqrt((n0 - tA)(n0 - tB)), with
  // tA, tB the pairs tied under A, under B. With one prompt it is SciPy's kendalltau.
  double within_kendall = NO_VALUE;
  // B = intercept + slope x A (raw); within prompt the slope is the relative temperature of B to A.
  double slope = NO_VALUE, intercept = NO_VALUE, within_slope = NO_VALUE;
  // The paired difference d = B - A.
  double mean_difference = NO_VALUE, sd_difference = NO_VALUE, ci_low = NO_VALUE, ci_high = NO_VALUE;
  double t_p_value = NO_VALUE, effect_size_dz = NO_VALUE;
  // The older tool's summary numbers, kept so its users can compare: |mean B - mean A|, mean and RMS of
  // |z(A) - z(B)| with population standard deviations, and the share of samples whose score signs differ.
  double drift_magnitude = NO_VALUE, mae_z = NO_VALUE, l2_z = NO_VALUE, sign_disagreement = NO_VALUE;
  std::vector<RewardDriftSlice> slices;
  std::vector<RewardDriftExample> examples;
  std::vector<RewardDriftBin> profile;  // 20 bins (fewer for few samples), in A order
  std::string verdict;               // "agree" | "drifted" | "disagree"; see reward_drift_verdict in the .cpp
  std::string summary;               // one line for a person
};

// Reads both sides and compares them. Errors: a side that cannot be read, a bad slice regex, no paired sample.
Result<RewardDriftReport> compare_reward_models(const std::vector<std::string>& a, const std::vector<std::string>& b,
                                                const RewardDriftOptions& options, Diagnostics& diagnostics);
Json reward_drift_json(const RewardDriftReport& report);
std::string reward_drift_markdown(const RewardDriftReport& report);
// The drift card: a self-contained HTML page (HtmlPage) with the same content and the B-against-A profile.
std::string reward_drift_html(const RewardDriftReport& report);

}  // namespace rldk
