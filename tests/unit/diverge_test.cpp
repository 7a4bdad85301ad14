// First divergence: identical runs never diverge; a spike, a level shift, a constant offset and a slow drift injected
// at a known step are found near that step, with the right kind.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "rldk/compare.h"
#include "test_support.h"

namespace {

using rldk::Divergence;
using rldk::DivergenceDetector;

struct Pair {
  std::vector<double> a, b;
};

// Two noisy runs of a decaying loss: B is A plus independent noise of the same size (different seeds).
Pair noisy_pair(size_t n, uint32_t seed, double noise = 0.02) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> gauss(0.0, noise);
  Pair p;
  for (size_t i = 0; i < n; ++i) {
    double trend = 1.0 * std::exp(-static_cast<double>(i) / 80.0) + 0.1;
    p.a.push_back(trend + gauss(rng));
    p.b.push_back(trend + gauss(rng));
  }
  return p;
}

Divergence run_detector(const Pair& p, rldk::DivergenceOptions options = {}, int64_t first_step = 1) {
  DivergenceDetector detector(options);
  for (size_t i = 0; i < p.a.size(); ++i) detector.push(first_step + static_cast<int64_t>(i), p.a[i], p.b[i]);
  detector.finish();
  return detector.result();
}

TEST(Divergence, IdenticalRunsNeverDiverge) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    Pair p = noisy_pair(300, seed);
    p.b = p.a;
    EXPECT_FALSE(run_detector(p).diverged) << "seed " << seed;
  }
}

TEST(Divergence, IndependentReplicasRarelyDiverge) {
  // Same distribution, different noise: the false-alarm rate the thresholds are tuned for (ARL0 ~ 9,500 points).
  int alarms = 0;
  for (uint32_t seed = 1; seed <= 20; ++seed) alarms += run_detector(noisy_pair(300, seed)).diverged ? 1 : 0;
  EXPECT_LE(alarms, 1);
}

TEST(Divergence, SpikeFoundAtItsStep) {
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    Pair p = noisy_pair(200, seed);
    p.b[120] += 0.5;  // step 121
    Divergence d = run_detector(p);
    ASSERT_TRUE(d.diverged) << "seed " << seed;
    EXPECT_EQ(d.onset_step, 121);
    EXPECT_EQ(d.detected_step, 121);
    EXPECT_EQ(d.kind, "spike");
    EXPECT_NEAR(d.magnitude, 0.5, 0.1);
  }
}

TEST(Divergence, LevelShiftFoundWithinTwoSteps) {
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    Pair p = noisy_pair(200, seed);
    for (size_t i = 100; i < p.b.size(); ++i) p.b[i] += 0.1;  // ~3.5 sigma of d, from step 101
    Divergence d = run_detector(p);
    ASSERT_TRUE(d.diverged) << "seed " << seed;
    EXPECT_NEAR(static_cast<double>(d.onset_step), 101.0, 2.0) << "seed " << seed;
    EXPECT_GE(d.detected_step, d.onset_step);
    EXPECT_LE(d.detected_step, 101 + 10);
    EXPECT_EQ(d.kind, "level_shift") << "seed " << seed;
    EXPECT_NEAR(d.magnitude, 0.1, 0.03);
  }
}

TEST(Divergence, LargeLevelShiftIsNotCalledASpike) {
  Pair p = noisy_pair(100, 3);
  for (size_t i = 50; i < p.b.size(); ++i) p.b[i] += 1.0;
  Divergence d = run_detector(p);
  ASSERT_TRUE(d.diverged);
  EXPECT_EQ(d.onset_step, 51);
  EXPECT_EQ(d.kind, "level_shift");
}

TEST(Divergence, ConstantOffsetFromTheStart) {
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    Pair p = noisy_pair(100, seed);
    for (double& v : p.b) v += 0.08;
    Divergence d = run_detector(p);
    ASSERT_TRUE(d.diverged) << "seed " << seed;
    EXPECT_LE(d.onset_step, 3) << "seed " << seed;
    EXPECT_EQ(d.kind, "offset") << "seed " << seed;
  }
}

TEST(Divergence, SlowDriftOnsetAndDelay) {
  // d grows by 0.1 sigma_d per step from step 101: the CUSUM needs ~ (k + sqrt(k^2 + 2 h delta)) / delta ~ 18 points
  // to alarm; the ramp fit puts the onset back near step 101.
  const double sigma_d = 0.02 * std::sqrt(2.0);
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    Pair p = noisy_pair(300, seed);
    for (size_t i = 100; i < p.b.size(); ++i) p.b[i] += 0.1 * sigma_d * static_cast<double>(i - 99);
    Divergence d = run_detector(p);
    ASSERT_TRUE(d.diverged) << "seed " << seed;
    EXPECT_EQ(d.kind, "drift") << "seed " << seed;
    EXPECT_NEAR(static_cast<double>(d.onset_step), 101.0, 8.0) << "seed " << seed;
    EXPECT_LE(d.detected_step, 101 + 30) << "seed " << seed;
    EXPECT_LE(d.onset_step, d.detected_step) << "seed " << seed;  // the refit never moves the onset past the alarm
  }
}

TEST(Divergence, DivergenceInsideWarmupIsFoundAtItsStep) {
  Pair p = noisy_pair(100, 5);
  p.b[2] += 1.0;  // step 3, before the warm-up ends
  rldk::DivergenceOptions options;
  Divergence d = run_detector(p, options);
  ASSERT_TRUE(d.diverged);
  EXPECT_EQ(d.onset_step, 3);
  EXPECT_EQ(d.kind, "spike");
  EXPECT_EQ(d.detected_step, static_cast<int64_t>(options.warmup));  // known once the warm-up ended
}

TEST(Divergence, NonFiniteInOneRun) {
  Pair p = noisy_pair(60, 6);
  p.b[40] = rldk_test::NaN;
  Divergence d = run_detector(p);
  ASSERT_TRUE(d.diverged);
  EXPECT_EQ(d.onset_step, 41);
  EXPECT_EQ(d.kind, "non_finite");
  // Both runs NaN at the same step: no evidence.
  Pair q = noisy_pair(60, 6);
  q.b = q.a;
  q.a[40] = q.b[40] = rldk_test::NaN;
  EXPECT_FALSE(run_detector(q).diverged);
}

TEST(Divergence, GivenSigmaSkipsWarmup) {
  Pair p = noisy_pair(50, 7);
  p.b = p.a;
  p.b[1] += 0.5;
  rldk::DivergenceOptions options;
  options.sigma = 0.01;
  Divergence d = run_detector(p, options);
  ASSERT_TRUE(d.diverged);
  EXPECT_EQ(d.detected_step, 2);
  EXPECT_EQ(d.sigma_source, "given");
}

TEST(Divergence, NoiseFreeRunsUseTheFloor) {
  // A noise-free linear schedule (a learning-rate warm-up): its first differences are all equal, so the noise
  // scale is the floor and a real difference of any size is found.
  Pair p;
  for (int i = 0; i < 50; ++i) p.a.push_back(1e-6 * (1.0 + i));
  p.b = p.a;
  p.b[30] += 1e-9;
  Divergence d = run_detector(p);
  ASSERT_TRUE(d.diverged);
  EXPECT_EQ(d.onset_step, 31);
}

TEST(RobustScale, MadOfGaussianIsSigma) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> gauss(0.0, 2.0);
  std::vector<double> v;
  for (int i = 0; i < 20000; ++i) v.push_back(gauss(rng));
  EXPECT_NEAR(rldk::robust_scale(v), 2.0, 0.05);
  std::vector<double> walk;  // a trend plus noise: first differences remove the trend
  for (int i = 0; i < 20000; ++i) walk.push_back(0.01 * i + gauss(rng));
  EXPECT_NEAR(rldk::first_difference_sigma(walk), 2.0, 0.08);
  EXPECT_TRUE(std::isnan(rldk::robust_scale({})));
}

}  // namespace

namespace {

rldk::DivergenceOptions with_healthy_range_of(const char* metric) {
  rldk::DivergenceOptions options;
  const rldk::MetricInfo* info = rldk::MetricDictionary::builtin().find(metric);
  EXPECT_NE(info, nullptr) << metric;
  if (info) options.healthy = info->healthy;
  return options;
}

}  // namespace

TEST(Divergence, ARunBeyondTheCriticalLevelDivergesWithoutANoiseEstimate) {
  // A real TRL run at 100x the learning rate, stopped by the monitor after four steps: four points give no noise
  // scale, and the statistical tests call the difference noise; the healthy range of policy/kl does not.
  Pair p{{0.0, 0.00011, 0.00020, 0.00031}, {0.0, 0.334, 3.006, 0.909}};
  EXPECT_FALSE(run_detector(p).diverged);
  Divergence d = run_detector(p, with_healthy_range_of("policy/kl"));
  ASSERT_TRUE(d.diverged);
  EXPECT_EQ(d.kind, "left_healthy_range");
  EXPECT_EQ(d.detector, "healthy_range");
  EXPECT_EQ(d.onset_step, 3);
  EXPECT_NEAR(d.magnitude, 3.006 - 0.0002, 1e-9);
}

TEST(Divergence, BothRunsBeyondTheCriticalLevelIsNoHealthyRangeDivergence) {
  // Both runs broken alike: the range says nothing about their difference, the statistical tests do.
  Pair p = noisy_pair(60, 3);
  for (auto& v : p.a) v += 5.0;
  for (auto& v : p.b) v += 5.0;
  Divergence d = run_detector(p, with_healthy_range_of("policy/kl"));
  EXPECT_TRUE(!d.diverged || d.detector != "healthy_range");
}

TEST(Divergence, EntropyCollapseRelativeToItsStartLeavesTheRange) {
  // Entropy falling to 1 % of its start in one run only: a relative side of the healthy range.
  Pair p;
  for (int i = 0; i < 10; ++i) {
    p.a.push_back(2.0);
    p.b.push_back(i < 6 ? 2.0 : 0.02);
  }
  Divergence d = run_detector(p, with_healthy_range_of("policy/entropy"));
  ASSERT_TRUE(d.diverged);
  EXPECT_EQ(d.detector, "healthy_range");
  EXPECT_EQ(d.onset_step, 7);
}
