// `rldk reward health`: is the reward model still a good teacher? Judged from per-sample data (rldk/samples.h):
// saturation at its bounds, GRPO groups that carry no signal, a preference for length, drift of the reward over
// training, the proxy rising while a gold/judge score falls, surface features of the text the reward pays for
// (shortcuts), and the highest-reward samples that look like hacking.
//
// Every check says what it measured with a p-value or an interval from the data, or says that it is not
// measurable here and why; never a fake 0 or a pass. Formulas and thresholds: docs/reward.md; thresholds are data
// (data/reward_health.yaml). JSON: rldk.reward-health/v1 (docs/schemas/rldk.reward-health.v1.schema.json).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rldk/json.h"
#include "rldk/result.h"
#include "rldk/samples.h"
#include "rldk/scan.h"  // Severity

namespace rldk {

inline constexpr const char* REWARD_HEALTH_SCHEMA = "rldk.reward-health/v1";

// A phrase feature of the shortcut probes: per sample, how often any of `phrases` occurs in the completion (ASCII
// case-insensitive, whole words). One entry per key of the `features:` section of data/reward_health.yaml.
struct ShortcutPhraseFeature {
  std::string name;
  std::vector<std::string> phrases;
};

// Documented thresholds, one field per key of data/reward_health.yaml (which holds the defaults and says why each
// value). Step windows are shares of the distinct steps seen, in step order.
struct RewardHealthThresholds {
  double confidence = 0;                   // level of every confidence interval
  // saturation
  double saturation_bound_eps = 0;         // "at a bound": within this share of the range of it
  double saturation_late_window = 0;       // share of steps at the end that count as late
  double saturation_warning = 0, saturation_critical = 0;  // late share at one bound
  double saturation_binary_warning = 0, saturation_binary_critical = 0;  // the same, for a two-valued reward
  // zero_variance_groups
  double zero_variance_share = 0;          // observed share of groups with zero reward spread
  double zero_variance_excess_z = 0;       // binary rewards: excess over p^G + (1 - p)^G, in standard errors
  // length_bias
  size_t length_min_samples = 0;
  double length_spearman_warning = 0, length_spearman_critical = 0;  // within-group Spearman
  double length_p_value = 0;
  double length_share_warning = 0;         // share of the reward gain explained by the length shift
  double length_window = 0;                // early = first, late = last, this share of steps
  size_t length_bins = 0;                  // quantile bins of pooled lengths
  size_t length_min_bin_samples = 0;       // per window, else the bin is dropped
  double length_min_gain_std = 0;          // |dR| below this many pooled reward stds: no share is computed
  // drift
  double drift_window = 0;
  size_t drift_min_window_samples = 0;
  double drift_p_value = 0;
  // gold
  double gold_late_window = 0;             // the trend is fitted over this last share of the steps with gold
  size_t gold_min_steps = 0;
  double gold_p_value = 0;
  size_t gold_fit_min_points = 0;          // the Gao et al. fit against sqrt(KL)
  double gold_fit_min_r2 = 0;
  double gold_past_peak_drop = 0;
  // suspicious_samples
  size_t suspicious_count = 0;
  double suspicious_length_z = 0;          // length z-score within the sample's group
  double suspicious_repetition = 0;        // repetition rate (1 - distinct word 3-grams / all word 3-grams)
  // shortcut_features
  size_t shortcut_min_samples = 0;
  double shortcut_r2_warning = 0, shortcut_r2_critical = 0;  // within-group r^2 of one feature
  double shortcut_p_value = 0;
  size_t shortcut_quotes = 0;              // highest-reward samples quoted per flagged feature
  // calibration (preference pairs)
  size_t calibration_min_pairs = 0;
  size_t calibration_bins = 0;             // equal-width bins of confidence over [0.5, 1]
  double calibration_ece_warning = 0, calibration_ece_critical = 0;
  double calibration_accuracy_p_value = 0; // binomial test of accuracy against chance
  size_t calibration_resamples = 0;        // bootstrap resamples for the ECE interval
  size_t calibration_quotes = 0;           // most confidently wrong pairs quoted
  std::vector<ShortcutPhraseFeature> shortcut_phrases;  // the `features:` section, in file order
};

// Parses thresholds from YAML text laid out as data/reward_health.yaml; every key is required and unknown keys
// are errors (a misspelt threshold must not silently fall back). `origin` names the text in errors.
Result<RewardHealthThresholds> reward_health_thresholds_from_yaml(std::string_view text, const std::string& origin);
// The built-in thresholds (data/reward_health.yaml, compiled in).
const RewardHealthThresholds& default_reward_health_thresholds();

// The policy's KL to its initial (reference) model per step, in the trainer's units: what Gao et al. fit the gold
// score against (d = sqrt(KL)).
struct KlSeries {
  std::string metric;                    // the canonical metric read, e.g. policy/kl_seq
  std::string source;                    // the log it came from
  std::vector<int64_t> steps;            // ascending
  std::vector<double> values;            // finite, >= 0
};

// The KL series of a training log (any format rldk reads): `metric` (a raw or canonical name) when given, else the
// first of policy/kl_seq (sequence KL, the quantity of Gao et al.), policy/kl, policy/kl_loss that the log has.
Result<KlSeries> kl_series_from_log(const std::string& path, const std::string& metric = "");

struct RewardHealthOptions {
  // The reward's declared range (lo < hi); absent: the observed [min, max] of each column.
  std::optional<double> range_lo, range_hi;
  // Empty: the gold check judges trends over steps only.
  KlSeries kl;
  RewardHealthThresholds thresholds = default_reward_health_thresholds();
};

enum class RewardCheckStatus { ok, finding, not_measurable };
const char* reward_check_status_name(RewardCheckStatus status);  // "ok", "finding", "not_measurable"

inline constexpr double NO_VALUE = std::numeric_limits<double>::quiet_NaN();

// What every check reports: its status, a severity when it is a finding, one line for a person, and when it is
// not measurable the plain reason why.
struct RewardCheck {
  RewardCheckStatus status = RewardCheckStatus::not_measurable;
  Severity severity = Severity::info;  // meaningful for findings only
  std::string message;
  std::string reason;                  // set when not measurable
};

struct CorrelationEstimate {
  double r = NO_VALUE;
  size_t n = 0;
  double ci_low = NO_VALUE, ci_high = NO_VALUE, p_value = NO_VALUE;
};

struct SaturationCheck : RewardCheck {
  double lo = NO_VALUE, hi = NO_VALUE;   // the range used
  bool range_declared = false;
  double eps = NO_VALUE;                 // bound_eps x (hi - lo)
  size_t samples = 0, late_samples = 0;
  int64_t late_first_step = 0;
  double share_low = NO_VALUE, share_high = NO_VALUE;            // all samples within eps of lo / hi
  double late_share_low = NO_VALUE, late_share_high = NO_VALUE;  // in the late window
  size_t outside_range = 0;              // samples outside a declared range
  size_t levels = 0;                     // distinct values, counted up to 12: <= 11 is a graded (verifiable) reward
};

struct ZeroVarianceCheck : RewardCheck {
  size_t groups = 0;                     // (step, group) with >= 2 samples
  size_t zero_variance_groups = 0;
  double observed_share = NO_VALUE;
  bool binary = false;                   // the column takes exactly two values
  double expected_share = NO_VALUE;      // mean over groups of p^G + (1 - p)^G, p the prompt's pooled pass rate
  double excess = NO_VALUE;              // observed - expected share
  double excess_z = NO_VALUE;            // (observed - expected count) / Poisson-binomial sd
};

struct LengthBiasCheck : RewardCheck {
  size_t samples = 0;
  CorrelationEstimate pearson, spearman;                 // reward vs length in words, all samples
  CorrelationEstimate within_pearson, within_spearman;   // after centring both on their (step, group) mean
  size_t within_groups = 0;
  std::string within_reason;             // why the within-group correlations are absent
  // Length-stratified gain between the early and late windows (Singhal et al. 2023).
  int64_t early_last_step = 0, late_first_step = 0;
  size_t early_samples = 0, late_samples = 0;
  double early_mean = NO_VALUE, late_mean = NO_VALUE;
  double delta_reward = NO_VALUE;        // dR = late mean - early mean
  double non_length_gain = NO_VALUE;     // NRG = sum_b w_b^late (mean_b^late - mean_b^early)
  double nrg_share = NO_VALUE;           // NRG / dR
  double length_share = NO_VALUE;        // 1 - NRG / dR
  size_t bins_used = 0;
  double late_share_in_bins = NO_VALUE;  // share of late samples in the bins kept
  std::string gain_reason;               // why the gain split is absent
};

struct DriftCheck : RewardCheck {
  int64_t early_last_step = 0, late_first_step = 0;
  size_t early_samples = 0, late_samples = 0;
  double early_mean = NO_VALUE, late_mean = NO_VALUE, early_std = NO_VALUE;
  double ks_statistic = NO_VALUE, ks_p_value = NO_VALUE;
  double wasserstein = NO_VALUE;
  double wasserstein_early_std = NO_VALUE;  // wasserstein / early std
};

struct GoldStep {
  int64_t step = 0;
  size_t samples = 0;
  double proxy_mean = NO_VALUE, gold_mean = NO_VALUE;
  double kl = NO_VALUE;                  // the KL at this step (interpolated between logged steps); NaN without one
};

struct GoldCheck : RewardCheck {
  size_t samples = 0;                    // samples with both a proxy and a gold value
  CorrelationEstimate spearman;          // proxy vs gold per sample
  std::vector<GoldStep> steps;
  int64_t window_first_step = 0;         // the late window the slopes are fitted over
  size_t window_steps = 0;
  double proxy_slope = NO_VALUE, proxy_slope_p = NO_VALUE;  // per step, least squares
  double gold_slope = NO_VALUE, gold_slope_p = NO_VALUE;
  // Gao et al.'s RL form fitted to the per-step gold means against d = sqrt(KL): gold = r0 + alpha d - beta d ln d
  // (r0 the gold of the initial policy). With beta > 0 it peaks at d* = exp(alpha / beta - 1).
  std::string kl_metric;                 // empty: no KL was given
  size_t fit_points = 0;                 // gold steps with a KL
  double fit_r0 = NO_VALUE, fit_alpha = NO_VALUE, fit_beta = NO_VALUE, fit_r2 = NO_VALUE;
  double peak_kl = NO_VALUE, peak_gold = NO_VALUE;  // d*^2 and the fitted gold there
  double last_kl = NO_VALUE;             // the KL at the last gold step
  bool past_peak = false;                // the KL has passed the peak and the fitted gold has fallen from it
  std::string fit_reason;                // why there is no fit (or no peak)
};

struct SuspiciousSample {
  std::string source;
  uint64_t row = 0;
  int64_t step = 0;
  double reward = NO_VALUE;
  uint32_t length_chars = 0, length_words = 0;
  double length_z = NO_VALUE;            // within its (step, group); NaN when the group has no spread
  double repetition = 0;
  std::vector<std::string> reasons;      // "long for its group", "repetitive"
  bool text_kept = false;                // false: the text fell out of the bounded set of kept examples
  std::string text;                      // truncated to RewardHealthAccumulator's quote_chars
  bool text_truncated = false;
  std::string prompt;                    // the sample's prompt, kept and truncated as the text
  bool prompt_truncated = false;
};

struct SuspiciousCheck : RewardCheck {
  size_t candidates = 0;                 // samples over either cut, before taking the highest rewards
  std::vector<SuspiciousSample> samples;
};

// One highest-reward sample that has a flagged feature.
struct ShortcutExample {
  std::string source;
  uint64_t row = 0;
  int64_t step = 0;
  double reward = NO_VALUE;
  double value = NO_VALUE;               // the feature's value for this sample
  bool text_kept = false;                // as SuspiciousSample
  std::string text;
  bool text_truncated = false;
};

// One surface feature regressed on its own against the within-group-centred reward, and its share of the joint fit.
struct ShortcutFeature {
  std::string name;
  std::string kind;                      // "builtin" or "phrase"
  bool judged = true;                    // false for log_length: length_bias judges length
  double mean = NO_VALUE;                // over the samples in groups of >= 2
  double present_share = NO_VALUE;       // share of those samples where the feature is not 0
  double r = NO_VALUE;                   // within-group correlation = standardized coefficient of the 1-feature fit
  double r2 = NO_VALUE;                  // within-group R^2 of this feature alone (r^2)
  double p_value = NO_VALUE;             // two-sided t test of r, n - groups - 1 df
  // The same with length held fixed (partial correlation given log length, within group): what the feature buys
  // beyond being long. Longer texts have more list items and more repeated 3-grams, so a reward that pays for
  // length alone must not make them shortcut candidates. The verdict is taken on these.
  double partial_r = NO_VALUE, partial_r2 = NO_VALUE, partial_p_value = NO_VALUE;
  double joint_coefficient = NO_VALUE;   // standardized coefficient in the joint fit of all features
  bool flagged = false;
  std::string reason;                    // why r is absent (no within-group variation, or collinear in the fit)
  std::vector<ShortcutExample> examples; // flagged features only
};

struct ShortcutFeaturesCheck : RewardCheck {
  size_t samples = 0;                    // samples in groups of >= 2
  size_t groups = 0;
  size_t df = 0;                         // n - groups - 1
  double joint_r2 = NO_VALUE;            // within-group R^2 of the joint least-squares fit
  size_t joint_features = 0;             // features in that fit (ones without variation or collinear are left out)
  std::vector<ShortcutFeature> features;
};

// The reward's distribution at one step: the quantile bands of the reward card.
struct StepDistribution {
  int64_t step = 0;
  size_t samples = 0;
  double p10 = NO_VALUE, p50 = NO_VALUE, p90 = NO_VALUE, mean = NO_VALUE;  // linear-interpolated quantiles
};

// Mean reward in one quantile bin of completion length (words), over all samples: the reward-vs-length profile.
struct LengthBin {
  double words_lo = NO_VALUE, words_hi = NO_VALUE;  // the bin's smallest and largest length
  size_t samples = 0;
  double words_mean = NO_VALUE, reward_mean = NO_VALUE;
};

struct RewardColumnHealth {
  std::string name;
  size_t samples = 0;                    // rows with a finite value in this column
  double min = NO_VALUE, max = NO_VALUE, mean = NO_VALUE;
  std::vector<StepDistribution> by_step; // in step order
  std::vector<LengthBin> by_length;      // length_bias.bins quantile bins of length; empty without completion text
  SaturationCheck saturation;
  ZeroVarianceCheck zero_variance_groups;
  LengthBiasCheck length_bias;
  DriftCheck drift;
  GoldCheck gold;
  SuspiciousCheck suspicious_samples;
  ShortcutFeaturesCheck shortcut_features;
};

// One equal-width bin of the reliability diagram: pairs whose confidence max(p, 1 - p) falls in [lo, hi).
struct CalibrationBin {
  double lo = 0, hi = 0;
  size_t pairs = 0;
  double confidence = NO_VALUE;          // mean confidence
  double accuracy = NO_VALUE;            // share of those pairs where the higher score was the preferred completion
};

// A pair the reward model got wrong with high confidence, quoted as evidence.
struct MiscalibratedPair {
  std::string source;
  uint64_t row = 0;
  double first_score = NO_VALUE, second_score = NO_VALUE;
  double label = NO_VALUE;               // 1: the first was preferred, 0: the second
  double confidence = NO_VALUE;          // sigma(|margin|): how sure the model was of the wrong side
  std::string prompt, preferred, other;  // cut to the accumulator's quote_chars
  bool text_truncated = false;
};

// calibration (methods.md §3.1): with preference pairs scored by the reward model, p = sigma(s_first - s_second)
// is the Bradley-Terry probability that the first is preferred. Accuracy, log-loss, Brier, ECE over confidence
// max(p, 1 - p) with its reliability diagram, and the temperature T that makes sigma(margin / T) calibrated.
struct CalibrationCheck : RewardCheck {
  size_t pairs = 0;                      // scored pairs with a 0/1 label (the ones measured)
  size_t label_ties = 0;                 // label 0.5: left out
  size_t unscored = 0;                   // a score missing or not finite: left out
  size_t score_ties = 0;                 // equal scores: half right
  double accuracy = NO_VALUE, accuracy_ci_low = NO_VALUE, accuracy_ci_high = NO_VALUE;  // Wilson interval
  double accuracy_p_value = NO_VALUE;    // exact binomial test against 0.5, score ties left out
  double log_loss = NO_VALUE, brier = NO_VALUE;
  double ece = NO_VALUE, ece_ci_low = NO_VALUE, ece_ci_high = NO_VALUE;  // percentile bootstrap interval
  double adaptive_ece = NO_VALUE;        // the same over equal-mass bins
  double extreme_share = NO_VALUE;       // pairs with confidence above 0.99: no resolution left
  double temperature = NO_VALUE;         // argmin_T log-loss of sigma(margin / T); NaN with temperature_reason
  std::string temperature_reason;
  double log_loss_at_temperature = NO_VALUE, ece_at_temperature = NO_VALUE;
  std::vector<CalibrationBin> bins;
  std::vector<MiscalibratedPair> confidently_wrong;
};

struct RewardHealthReport {
  std::string format;                    // from the sample reader
  size_t rows = 0;
  size_t steps = 0;                      // distinct steps
  int64_t first_step = 0, last_step = 0;
  bool has_gold = false, has_group = false, has_step = false;
  std::optional<double> range_lo, range_hi;  // as declared
  double confidence = NO_VALUE;          // level of the confidence intervals
  std::vector<RewardColumnHealth> columns;
  size_t pairs = 0;                      // preference pairs read (files laid out as pairs)
  std::string pair_format;
  CalibrationCheck calibration;
  std::string verdict;                   // "fail" (a critical finding), "warn" (a warning), else "pass"
};

// Collects what the checks need from a stream of samples: per sample a handful of numbers (step, 64-bit hashes of
// the group and the prompt, each reward, lengths in characters and words, the repetition rate, gold), about 50
// bytes plus 8 per reward column plus 4 per surface feature, and per reward column the `kept_examples`
// highest-reward texts (ties broken toward longer completions, which the length outliers are), cut to
// `quote_chars` characters. The phrase features are computed as samples arrive, so they are fixed here, not by
// the thresholds later given to finish().
// Preference pairs (PairSink) are kept as their score margin and label, about 12 bytes each, plus the
// `kept_examples` most confidently wrong pairs as text.
class RewardHealthAccumulator : public SampleSink, public PairSink {
 public:
  explicit RewardHealthAccumulator(
      size_t quote_chars = 400, size_t kept_examples = 256,
      const std::vector<ShortcutPhraseFeature>& phrase_features = default_reward_health_thresholds().shortcut_phrases);
  ~RewardHealthAccumulator() override;

  void on_schema(const SampleSchema& schema) override;
  void on_row(const SampleRow& row) override;
  void on_pair_format(const std::string& format) override;
  void on_pair(const PairRow& pair) override;
  size_t rows() const;  // samples; pairs are counted in the report

  // Runs every check on what was collected. May be called more than once (e.g. with other options).
  RewardHealthReport finish(const RewardHealthOptions& options) const;

  struct State;  // the collected columns (src/core/reward/sample_table.h)

 private:
  std::unique_ptr<State> state_;
};

// What `rldk reward health` and rldk.reward.health() do: reads every source (rollout samples and preference pairs)
// and runs every check. Bad rows are reported in `diagnostics` (file:row); an error when a source cannot be read.
Result<RewardHealthReport> reward_health(const std::vector<std::string>& sources, const SampleReadOptions& read,
                                         const RewardHealthOptions& options, Diagnostics& diagnostics);

// "fail" if any finding is critical, "warn" if any is a warning, else "pass" (info findings are context).
std::string reward_health_verdict(const RewardHealthReport& report);
Json reward_health_json(const RewardHealthReport& report);
std::string reward_health_markdown(const RewardHealthReport& report);
// The reward card: a self-contained HTML page (HtmlPage) with the same content and the proxy-vs-gold chart.
std::string reward_health_html(const RewardHealthReport& report);

}  // namespace rldk
