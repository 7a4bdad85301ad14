// `rldk reward health`: the statistics it rests on against SciPy (numbers pasted with the SciPy call that made
// them, SciPy 1.17.1), and the accumulator on synthetic rollouts: clean data gives no finding, each injected
// pathology gives its finding, and missing inputs give not_measurable with a reason.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "report/markdown_text.h"
#include "reward/text_features.h"
#include "rldk/reward_health.h"
#include "stats/correlation.h"
#include "stats/distributions.h"
#include "stats/robust.h"
#include "stats/trend.h"
#include "stats/two_sample.h"

namespace rldk {
namespace {

// ---- statistics ---------------------------------------------------------------------------------------------

const std::vector<double> X = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
const std::vector<double> Y = {2.1, 1.9, 3.5, 3.0, 5.2, 4.8, 4.8, 7.1, 6.0, 9.3, 8.8, 12.0};

TEST(RewardStats, AverageRanksShareTies) {
  // scipy.stats.rankdata(Y) -> [2, 1, 4, 3, 7, 5.5, 5.5, 9, 8, 11, 10, 12]
  std::vector<double> expected = {2, 1, 4, 3, 7, 5.5, 5.5, 9, 8, 11, 10, 12};
  EXPECT_EQ(stats::average_ranks(Y), expected);
}

TEST(RewardStats, PearsonMatchesScipy) {
  // r = scipy.stats.pearsonr(X, Y); r.statistic, r.pvalue, r.confidence_interval(0.95)
  stats::Correlation c = stats::pearson(X, Y);
  EXPECT_NEAR(c.r, 0.9447020783611797, 1e-12);
  EXPECT_NEAR(c.p_value, 3.709726155346271e-06, 1e-15);
  EXPECT_NEAR(c.ci_low, 0.8099016284088065, 1e-9);
  EXPECT_NEAR(c.ci_high, 0.9847212594341864, 1e-9);
  EXPECT_EQ(c.n, 12u);
}

TEST(RewardStats, SpearmanMatchesScipy) {
  // s = scipy.stats.spearmanr(X, Y); s.statistic, s.pvalue
  stats::Correlation c = stats::spearman(X, Y);
  EXPECT_NEAR(c.r, 0.9492133645984593, 1e-12);
  EXPECT_NEAR(c.p_value, 2.4427417276402144e-06, 1e-15);
}

TEST(RewardStats, ConstantInputHasNoCorrelation) {
  std::vector<double> flat(12, 1.0);
  stats::Correlation c = stats::pearson(X, flat);
  EXPECT_TRUE(std::isnan(c.r));
  EXPECT_TRUE(std::isnan(c.p_value));
  EXPECT_TRUE(std::isnan(stats::spearman(flat, Y).r));
}

TEST(RewardStats, DistributionFunctionsMatchScipy) {
  // scipy.special.betainc(2.5, 0.5, 0.3), betainc(10, 3, 0.9)
  EXPECT_NEAR(stats::incomplete_beta(2.5, 0.5, 0.3), 0.018927124071945658, 1e-14);
  EXPECT_NEAR(stats::incomplete_beta(10, 3, 0.9), 0.889130022255, 1e-11);
  // 2 * scipy.stats.t.sf(2.1, 7), 2 * t.sf(0.3, 50)
  EXPECT_NEAR(stats::student_t_two_sided_p(2.1, 7), 0.07387119621292265, 1e-13);
  EXPECT_NEAR(stats::student_t_two_sided_p(-0.3, 50), 0.7654208802553033, 1e-13);
  // scipy.stats.kstwobign.sf(0.5), sf(1.0), sf(1.5)
  EXPECT_NEAR(stats::kolmogorov_sf(0.5), 0.9639452436648751, 1e-13);
  EXPECT_NEAR(stats::kolmogorov_sf(1.0), 0.26999967167735456, 1e-13);
  EXPECT_NEAR(stats::kolmogorov_sf(1.5), 0.022217962616525127, 1e-14);
  // scipy.stats.norm.ppf(0.975), norm.ppf(1e-6), norm.sf(5)
  EXPECT_NEAR(stats::normal_quantile(0.975), 1.959963984540054, 1e-13);
  EXPECT_NEAR(stats::normal_quantile(1e-6), -4.753424308822899, 1e-11);
  EXPECT_NEAR(stats::normal_sf(5), 2.866515718791933e-07, 1e-20);
}

const std::vector<double> A = {0.1, 0.5, 0.3, 0.9, 1.2, 0.7, 0.2, 0.4};
const std::vector<double> B = {0.8, 1.1, 0.9, 1.5, 1.3, 0.6, 1.9, 1.0, 1.4};

TEST(RewardStats, KolmogorovSmirnovMatchesScipy) {
  // scipy.stats.ks_2samp(A, B, method='asymp').statistic -> 0.6388888888888888
  // p: scipy.stats.kstwobign.sf(sqrt(8 * 9 / 17) * D) -> 0.06301386866648814 (ks_2samp's own asymp p, which uses
  // the finite-n kstwo, is 0.04102009030635576: the limit form is the conservative one, see two_sample.h)
  stats::KolmogorovSmirnov ks = stats::ks_two_sample(A, B);
  EXPECT_NEAR(ks.statistic, 0.6388888888888888, 1e-14);
  EXPECT_NEAR(ks.p_value, 0.06301386866648814, 1e-12);
  EXPECT_GE(ks.p_value, 0.04102009030635576);
  EXPECT_TRUE(std::isnan(stats::ks_two_sample(A, {}).statistic));
}

TEST(RewardStats, WassersteinMatchesScipy) {
  // scipy.stats.wasserstein_distance(A, B) -> 0.6291666666666667
  EXPECT_NEAR(stats::wasserstein_distance(A, B), 0.6291666666666667, 1e-14);
  EXPECT_DOUBLE_EQ(stats::wasserstein_distance(A, A), 0.0);
}

TEST(RewardStats, LinearFitMatchesScipy) {
  // l = scipy.stats.linregress([0..5], [1.0, 1.8, 3.2, 3.9, 5.1, 6.2]); slope, intercept, stderr, pvalue
  std::vector<double> x = {0, 1, 2, 3, 4, 5}, y = {1.0, 1.8, 3.2, 3.9, 5.1, 6.2};
  stats::LinearFit f = stats::linear_fit(x, y);
  EXPECT_NEAR(f.slope, 1.0457142857142856, 1e-12);
  EXPECT_NEAR(f.intercept, 0.9190476190476193, 1e-12);
  EXPECT_NEAR(f.slope_stderr, 0.03717946913512977, 1e-12);
  EXPECT_NEAR(f.p_value, 9.507377261932986e-06, 1e-14);
}

TEST(RewardStats, QuantileAndVarianceMatchNumpy) {
  // numpy.quantile([3, 1, 4, 1, 5, 9, 2, 6], [0.1, 0.5, 0.9]) -> [1, 3.5, 6.9]; numpy.var([1, 2, 3, 4, 10], ddof=1)
  std::vector<double> sorted = {1, 1, 2, 3, 4, 5, 6, 9};
  EXPECT_NEAR(stats::quantile_sorted(sorted, 0.1), 1.0, 1e-12);
  EXPECT_NEAR(stats::quantile_sorted(sorted, 0.5), 3.5, 1e-12);
  EXPECT_NEAR(stats::quantile_sorted(sorted, 0.9), 6.9, 1e-12);
  EXPECT_DOUBLE_EQ(stats::variance(std::vector<double>{1, 2, 3, 4, 10}, 1), 12.5);
  EXPECT_TRUE(std::isnan(stats::variance(std::vector<double>{1}, 1)));
}

// ---- text features and thresholds ---------------------------------------------------------------------------

TEST(RewardText, LengthsAndRepetition) {
  std::vector<uint64_t> scratch;
  // 3-grams: (a b c) (b c a) (c a b) (a b c): 4, of which 3 distinct -> 1 - 3/4.
  reward::TextFeatures f = reward::text_features("a b c a  b\tc", scratch);
  EXPECT_EQ(f.words, 6u);
  EXPECT_DOUBLE_EQ(f.repetition, 0.25);
  EXPECT_EQ(reward::text_features("h\xc3\xa9llo w\xc3\xb6rld", scratch).chars, 11u);  // code points, not bytes
  EXPECT_DOUBLE_EQ(reward::text_features("two words", scratch).repetition, 0.0);
  bool truncated = false;
  EXPECT_EQ(reward::truncate_chars("h\xc3\xa9llo", 2, truncated), "h\xc3\xa9");
  EXPECT_TRUE(truncated);
  EXPECT_EQ(reward::truncate_chars("abc", 5, truncated), "abc");
  EXPECT_FALSE(truncated);
}

TEST(RewardText, MarkupAndPhraseFeatures) {
  std::vector<uint64_t> scratch;
  std::string text =
      "Certainly! I can\xe2\x80\x99t say. Of course.\n"
      "# Title\n  ## Sub\n#hashtag\n#include <x>\n"
      "- a\n* b\n+ c\n1. d\n  12) e\n2024 was\n-5 degrees\n**bold**\n"
      "```py\nx = 1\n```\n```\nunclosed\n"
      "sorrys uncertainly I think, perhaps. caf\xc3\xa9";
  reward::TextFeatures f = reward::text_features(text, scratch);
  EXPECT_EQ(f.headers, 2u);      // "#hashtag" and "#include" are not headers
  EXPECT_EQ(f.list_items, 5u);   // "2024 was", "-5" and "**bold**" are not items
  EXPECT_EQ(f.code_blocks, 2u);  // one closed block and one left open
  EXPECT_EQ(f.non_ascii, 2u);    // the typographic apostrophe and the accented e
  std::vector<ShortcutPhraseFeature> phrases = {{"affirmation", {"certainly", "Of Course"}},
                                                {"refusal", {"i can't"}},
                                                {"apology", {"sorry"}},
                                                {"hedging", {"i think", "perhaps"}}};
  reward::PhraseMatcher matcher(phrases);
  std::vector<float> out(reward::BUILTIN_FEATURES.size() + phrases.size(), -1.0f);
  reward::shortcut_features(text, f, matcher, out.data());
  EXPECT_FLOAT_EQ(out[0], static_cast<float>(std::log1p(f.words)));
  EXPECT_FLOAT_EQ(out[2], 5.0f);
  EXPECT_FLOAT_EQ(out[5], static_cast<float>(2.0 / f.chars));
  const float* p = out.data() + reward::BUILTIN_FEATURES.size();
  EXPECT_FLOAT_EQ(p[0], 2.0f);  // "Certainly", "Of course"; not "uncertainly"
  EXPECT_FLOAT_EQ(p[1], 1.0f);  // "can\u2019t" reads as "can't"
  EXPECT_FLOAT_EQ(p[2], 0.0f);  // "sorrys" is another word
  EXPECT_FLOAT_EQ(p[3], 2.0f);
}

TEST(RewardThresholds, BuiltInFileLoadsAndStrictParsingRejectsTypos) {
  const RewardHealthThresholds& t = default_reward_health_thresholds();
  EXPECT_DOUBLE_EQ(t.saturation_warning, 0.5);
  EXPECT_DOUBLE_EQ(t.saturation_critical, 0.8);
  EXPECT_EQ(t.length_min_samples, 20u);
  EXPECT_EQ(t.suspicious_count, 5u);
  EXPECT_DOUBLE_EQ(t.shortcut_r2_warning, 0.10);
  EXPECT_DOUBLE_EQ(t.shortcut_p_value, 0.001);
  ASSERT_EQ(t.shortcut_phrases.size(), 4u);
  EXPECT_EQ(t.shortcut_phrases[3].name, "affirmation");
  EXPECT_EQ(t.shortcut_phrases[3].phrases[0], "certainly");
  auto missing = reward_health_thresholds_from_yaml("confidence: 0.95\n", "test.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("saturation.bound_eps"), std::string::npos);
}

// ---- the accumulator on synthetic rollouts ------------------------------------------------------------------

// A rollout generator that owns the texts the SampleRow views point into.
struct Rollout {
  struct Sample {
    int64_t step;
    std::string prompt, completion;
    double reward;
    double gold = std::nan("");
  };
  std::vector<Sample> samples;
  bool with_gold = false;

  void add_text(int64_t step, int prompt, std::string text, double reward) {
    samples.push_back({step, "prompt " + std::to_string(prompt), std::move(text), reward});
  }

  void add(int64_t step, int prompt, size_t words, double reward, bool repeat = false) {
    std::string text;
    for (size_t w = 0; w < words; ++w) {
      if (!text.empty()) text += ' ';
      text += repeat ? "again" : "w" + std::to_string(w);
    }
    samples.push_back({step, "prompt " + std::to_string(prompt), text, reward});
  }

  RewardHealthReport run(const RewardHealthOptions& options = {}) const {
    RewardHealthAccumulator acc;
    SampleSchema schema;
    schema.rewards = {"reward"};
    schema.has_step = true;
    schema.has_gold = with_gold;
    schema.format = "synthetic";
    acc.on_schema(schema);
    uint64_t row = 0;
    for (const auto& s : samples) {
      SampleRow r;
      r.step = s.step;
      r.prompt = s.prompt;
      r.completion = s.completion;
      r.group = s.prompt;  // as the readers do without a group column
      r.rewards = &s.reward;
      r.advantage = std::nan("");
      r.gold = s.gold;
      r.source = "synthetic.jsonl";
      r.row = row++;
      acc.on_row(r);
    }
    return acc.finish(options);
  }
};

constexpr int STEPS = 30, PROMPTS = 6, GROUP = 8;

// Group lengths evenly spaced (no length outlier), rewards noise independent of length and step.
Rollout clean_rollout(uint32_t seed = 7) {
  Rollout r;
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.5, 0.1);
  for (int step = 0; step < STEPS; ++step) {
    for (int p = 0; p < PROMPTS; ++p) {
      for (int g = 0; g < GROUP; ++g) r.add(step, p, 30 + 5 * static_cast<size_t>((g * 3 + step + p) % GROUP), noise(rng));
    }
  }
  return r;
}

TEST(RewardHealth, CleanRolloutHasNoFinding) {
  RewardHealthReport report = clean_rollout().run();
  ASSERT_EQ(report.columns.size(), 1u);
  const RewardColumnHealth& c = report.columns[0];
  EXPECT_EQ(report.rows, static_cast<size_t>(STEPS * PROMPTS * GROUP));
  EXPECT_EQ(c.saturation.status, RewardCheckStatus::ok) << c.saturation.message;
  EXPECT_EQ(c.zero_variance_groups.status, RewardCheckStatus::ok) << c.zero_variance_groups.message;
  EXPECT_EQ(c.length_bias.status, RewardCheckStatus::ok) << c.length_bias.message;
  EXPECT_EQ(c.drift.status, RewardCheckStatus::ok) << c.drift.message;
  EXPECT_EQ(c.suspicious_samples.status, RewardCheckStatus::ok) << c.suspicious_samples.message;
  EXPECT_EQ(report.verdict, "pass");
  EXPECT_EQ(c.zero_variance_groups.groups, static_cast<size_t>(STEPS * PROMPTS));
  EXPECT_FALSE(std::isnan(c.length_bias.within_spearman.r));
}

TEST(RewardHealth, InjectedLengthBiasIsFound) {
  Rollout r;
  std::mt19937 rng(11);
  std::normal_distribution<double> noise(0, 0.05);
  for (int step = 0; step < STEPS; ++step) {
    for (int p = 0; p < PROMPTS; ++p) {
      // Lengths grow over training and the reward pays for them, nothing else.
      for (int g = 0; g < GROUP; ++g) {
        size_t words = 20 + static_cast<size_t>(step) + 4 * static_cast<size_t>(g);
        r.add(step, p, words, 0.01 * static_cast<double>(words) + noise(rng));
      }
    }
  }
  RewardHealthReport report = r.run();
  const LengthBiasCheck& l = report.columns[0].length_bias;
  EXPECT_EQ(l.status, RewardCheckStatus::finding);
  EXPECT_EQ(l.severity, Severity::critical) << l.message;
  EXPECT_GT(l.within_spearman.r, 0.6);
  EXPECT_LT(l.within_spearman.p_value, 1e-6);
  EXPECT_LT(l.within_spearman.ci_low, l.within_spearman.r);
  EXPECT_GT(l.delta_reward, 0);
  // Within a length bin the reward does not move: almost all of the gain is the length shift.
  EXPECT_GT(l.length_share, 0.5) << l.gain_reason;
  EXPECT_EQ(report.verdict, "fail");
}

TEST(RewardHealth, SaturationAtTheTopIsFound) {
  Rollout r = clean_rollout();
  // In the last fifth of the steps, 9 of 10 samples get the top of the declared range.
  for (size_t i = 0; i < r.samples.size(); ++i) {
    if (r.samples[i].step >= STEPS - STEPS / 5 && i % 10 != 0) r.samples[i].reward = 1.0;
  }
  RewardHealthOptions options;
  options.range_lo = 0.0;
  options.range_hi = 1.0;
  RewardHealthReport report = r.run(options);
  const SaturationCheck& s = report.columns[0].saturation;
  EXPECT_EQ(s.status, RewardCheckStatus::finding);
  EXPECT_EQ(s.severity, Severity::critical);
  EXPECT_TRUE(s.range_declared);
  EXPECT_NEAR(s.late_share_high, 0.9, 0.01);
  EXPECT_LT(s.share_high, 0.2);  // overall the run is not saturated: only its end is
}

TEST(RewardHealth, AGradedRewardAtZeroIsNotSaturatedButAContinuousOneIs) {
  // The share of four unit tests passed (levels 0, 0.25, ..., 1), with 60 % of samples failing every test: the
  // reward of a hard code task, working as designed. The same share at the bottom of a continuous reward model's
  // scores is saturation.
  for (bool graded : {true, false}) {
    Rollout r;
    uint32_t k = 0;
    for (int step = 0; step < STEPS; ++step) {
      for (int p = 0; p < PROMPTS; ++p) {
        for (int g = 0; g < GROUP; ++g, ++k) {
          double reward = k % 10 < 6 ? 0.0 : graded ? 0.25 * static_cast<double>(1 + k % 4) : 0.1 + 0.001 * (k % 900);
          r.add(step, p, 30 + 5 * static_cast<size_t>(g), reward);
        }
      }
    }
    RewardHealthReport report = r.run();
    const SaturationCheck& s = report.columns[0].saturation;
    EXPECT_NEAR(s.late_share_low, 0.6, 0.02);
    if (graded) {
      EXPECT_EQ(s.levels, 5u);
      EXPECT_EQ(s.status, RewardCheckStatus::ok) << s.message;
    } else {
      EXPECT_EQ(s.levels, 12u);
      EXPECT_EQ(s.status, RewardCheckStatus::finding) << s.message;
    }
  }
}

TEST(RewardHealth, AllEqualGroupsAreFoundAgainstTheirExpectation) {
  Rollout r;
  // Binary reward; every prompt passes on half of the steps, but each group is all-pass or all-fail, so the groups
  // never carry signal although p = 0.5 would make flat groups rare (2 x 0.5^8 = 0.8%).
  for (int step = 0; step < STEPS; ++step) {
    for (int p = 0; p < PROMPTS; ++p) {
      double reward = (step + p) % 2 == 0 ? 1.0 : 0.0;
      for (int g = 0; g < GROUP; ++g) r.add(step, p, 30 + 5 * static_cast<size_t>(g), reward);
    }
  }
  RewardHealthReport report = r.run();
  const ZeroVarianceCheck& z = report.columns[0].zero_variance_groups;
  EXPECT_EQ(z.status, RewardCheckStatus::finding);
  EXPECT_TRUE(z.binary);
  EXPECT_DOUBLE_EQ(z.observed_share, 1.0);
  EXPECT_NEAR(z.expected_share, 2 * std::pow(0.5, GROUP), 1e-12);
  EXPECT_GT(z.excess_z, 3);
}

TEST(RewardHealth, ProxyUpGoldDownIsCritical) {
  Rollout r = clean_rollout();
  r.with_gold = true;
  std::mt19937 rng(3);
  std::normal_distribution<double> noise(0, 0.05);
  for (auto& s : r.samples) {
    auto step = static_cast<double>(s.step);
    s.reward = 0.02 * step + noise(rng);
    // Gold rises with the proxy, peaks mid-run, then falls while the proxy keeps climbing.
    s.gold = (step < STEPS / 2 ? 0.02 * step : 0.02 * (STEPS - step)) + noise(rng);
  }
  RewardHealthReport report = r.run();
  const GoldCheck& g = report.columns[0].gold;
  EXPECT_EQ(g.status, RewardCheckStatus::finding) << g.message << g.reason;
  EXPECT_EQ(g.severity, Severity::critical);
  EXPECT_LT(g.gold_slope, 0);
  EXPECT_GT(g.proxy_slope, 0);
  EXPECT_EQ(g.steps.size(), static_cast<size_t>(STEPS));
  EXPECT_EQ(report.verdict, "fail");
  // The rising proxy also moves the reward distribution: context, not a fault.
  EXPECT_EQ(report.columns[0].drift.status, RewardCheckStatus::finding);
  EXPECT_EQ(report.columns[0].drift.severity, Severity::info);
}

TEST(RewardHealth, MissingInputsAreNotMeasurableWithAReason) {
  Rollout r;
  for (int i = 0; i < 10; ++i) r.add(0, i, 10, 1.0);  // one step, one sample per prompt, all rewards equal
  RewardHealthReport report = r.run();
  const RewardColumnHealth& c = report.columns[0];
  EXPECT_EQ(c.saturation.status, RewardCheckStatus::not_measurable);
  EXPECT_NE(c.saturation.reason.find("no range is declared"), std::string::npos);
  EXPECT_EQ(c.zero_variance_groups.status, RewardCheckStatus::not_measurable);
  EXPECT_FALSE(c.zero_variance_groups.reason.empty());
  EXPECT_EQ(c.length_bias.status, RewardCheckStatus::not_measurable);
  EXPECT_NE(c.length_bias.reason.find("needs 20"), std::string::npos);
  EXPECT_EQ(c.drift.status, RewardCheckStatus::not_measurable);
  EXPECT_NE(c.drift.reason.find("one step"), std::string::npos);
  EXPECT_EQ(c.gold.status, RewardCheckStatus::not_measurable);
  EXPECT_NE(c.gold.reason.find("gold"), std::string::npos);
  // Not measurable is neither a finding nor a fake number.
  EXPECT_TRUE(std::isnan(c.saturation.late_share_high));
  EXPECT_EQ(report.verdict, "pass");
}

TEST(RewardHealth, SuspiciousSamplesAreQuotedAndReportsEscapeData) {
  Rollout r = clean_rollout();
  // A repetitive completion with the top reward: evidence to quote.
  r.add(5, 0, 40, 2.0, /*repeat=*/true);
  RewardHealthReport report = r.run();
  const SuspiciousCheck& s = report.columns[0].suspicious_samples;
  ASSERT_EQ(s.status, RewardCheckStatus::finding);
  ASSERT_FALSE(s.samples.empty());
  EXPECT_DOUBLE_EQ(s.samples[0].reward, 2.0);
  EXPECT_TRUE(s.samples[0].text_kept);
  EXPECT_EQ(s.samples[0].text.substr(0, 11), "again again");
  EXPECT_EQ(s.samples[0].row, r.samples.size() - 1);

  report.columns[0].name = "<script>x</script>|`";
  std::string md = reward_health_markdown(report);
  // Untrusted names go into a code span (literal in every renderer, `|` escaped so a table cannot split).
  EXPECT_NE(md.find("## Reward " + md_code(report.columns[0].name)), std::string::npos);
  EXPECT_NE(md.find("again again"), std::string::npos);
  std::string json = reward_health_json(report).dump(-1);
  EXPECT_NE(json.find("\"schema\":\"rldk.reward-health/v1\""), std::string::npos);
  EXPECT_NE(json.find("\"status\":\"not_measurable\""), std::string::npos);  // gold
}

// Completions with markup and phrases sprinkled independently of everything else; `certainly_bonus` is what the
// reward pays for starting with "Certainly!".
Rollout decorated_rollout(double certainly_bonus, uint32_t seed) {
  Rollout r;
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.5, 0.1);
  std::bernoulli_distribution half(0.5), some(0.3);
  for (int step = 0; step < STEPS; ++step) {
    for (int p = 0; p < PROMPTS; ++p) {
      for (int g = 0; g < GROUP; ++g) {
        bool certainly = half(rng);
        std::string text = certainly ? "Certainly! " : "";
        if (some(rng)) text += "I think ";
        if (some(rng)) text += "Sorry, ";
        if (some(rng)) text += "# Answer\n";
        for (int w = 0; w < 30 + 5 * ((g * 3 + step + p) % GROUP); ++w) text += "w" + std::to_string(w) + " ";
        if (some(rng)) text += "\n- one\n- two\n";
        if (some(rng)) text += "\n```\ncode\n```\n";
        r.add_text(step, p, text, noise(rng) + (certainly ? certainly_bonus : 0.0));
      }
    }
  }
  return r;
}

TEST(RewardHealth, ShortcutFeaturesCleanSetHasNoFinding) {
  RewardHealthReport report = decorated_rollout(0.0, 21).run();
  const ShortcutFeaturesCheck& s = report.columns[0].shortcut_features;
  ASSERT_EQ(s.status, RewardCheckStatus::ok) << s.message << s.reason;
  EXPECT_EQ(s.groups, static_cast<size_t>(STEPS * PROMPTS));
  EXPECT_EQ(s.df, static_cast<size_t>(STEPS * PROMPTS * GROUP - STEPS * PROMPTS - 1));
  EXPECT_LT(s.joint_r2, 0.05);
  for (const auto& f : s.features) {
    EXPECT_FALSE(f.flagged) << f.name;
    if (f.name == "apology" || f.name == "headers" || f.name == "affirmation") {
      EXPECT_FALSE(std::isnan(f.r)) << f.name;
    }
  }
  EXPECT_EQ(report.verdict, "pass");
}

TEST(RewardHealth, ShortcutFeaturePaidForIsFoundAndQuoted) {
  RewardHealthReport report = decorated_rollout(0.3, 22).run();
  const ShortcutFeaturesCheck& s = report.columns[0].shortcut_features;
  ASSERT_EQ(s.status, RewardCheckStatus::finding) << s.message << s.reason;
  // Effect variance 0.3^2 / 4 against noise 0.1^2: r^2 about 0.69, far above r2_critical.
  EXPECT_EQ(s.severity, Severity::critical);
  EXPECT_NE(s.message.find("affirmation"), std::string::npos);
  std::vector<std::string> flagged;
  const ShortcutFeature* affirmation = nullptr;
  for (const auto& f : s.features) {
    if (f.flagged) flagged.push_back(f.name);
    if (f.name == "affirmation") affirmation = &f;
  }
  EXPECT_EQ(flagged, std::vector<std::string>{"affirmation"});
  ASSERT_NE(affirmation, nullptr);
  EXPECT_GT(affirmation->r, 0.7);
  EXPECT_LT(affirmation->p_value, 1e-12);
  EXPECT_NEAR(affirmation->joint_coefficient, affirmation->r, 0.05);  // the other features are independent of it
  EXPECT_GE(s.joint_r2, affirmation->r2 - 1e-12);
  ASSERT_EQ(affirmation->examples.size(), 2u);
  EXPECT_TRUE(affirmation->examples[0].text_kept);
  EXPECT_EQ(affirmation->examples[0].text.substr(0, 11), "Certainly! ");
  EXPECT_GE(affirmation->examples[0].reward, affirmation->examples[1].reward);
  EXPECT_EQ(report.verdict, "fail");
  std::string json = reward_health_json(report).dump(-1);
  EXPECT_NE(json.find("\"check\":\"shortcut_features\""), std::string::npos);
  EXPECT_NE(reward_health_markdown(report).find("shortcut candidate"), std::string::npos);
}

TEST(RewardHealth, ShortcutFeaturesNeedGroupsAndTextVariation) {
  Rollout few;
  for (int i = 0; i < 10; ++i) few.add(0, i, 10, 1.0);
  const ShortcutFeaturesCheck a = few.run().columns[0].shortcut_features;  // a copy: the report is a temporary
  EXPECT_EQ(a.status, RewardCheckStatus::not_measurable);
  EXPECT_NE(a.reason.find("need 20"), std::string::npos) << a.reason;
  Rollout singletons;
  for (int i = 0; i < 40; ++i) singletons.add(0, i, 10 + static_cast<size_t>(i), 0.1 * i);
  const ShortcutFeaturesCheck b = singletons.run().columns[0].shortcut_features;  // a copy: the report is a temporary
  EXPECT_EQ(b.status, RewardCheckStatus::not_measurable);
  EXPECT_NE(b.reason.find("two or more samples"), std::string::npos) << b.reason;
  // Plain words only: length varies, nothing else does, and length is length_bias's to judge.
  const ShortcutFeaturesCheck c = clean_rollout().run().columns[0].shortcut_features;  // a copy: the report is a temporary
  EXPECT_EQ(c.status, RewardCheckStatus::not_measurable);
  EXPECT_NE(c.reason.find("other than length"), std::string::npos) << c.reason;
}

}  // namespace
}  // namespace rldk
